import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { issueApiToken } from "../../src/auth/api-tokens.ts";
import { startInstance, type Instance, type InstanceOverrides } from "../../src/cli/serve.ts";
import type { AppContext } from "../../src/context.ts";
import { SCOPES, type Plan, type Scope } from "../../src/domain/scopes.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { engineArgs } from "./engine.ts";

export function tempDir(prefix = "vigil-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  ctx: AppContext;
  instance: Instance;
  /** the bootstrap token of account `default` (enterprise, all scopes) */
  token: string;
  /** every log line the server wrote, as parsed JSON */
  logs: Record<string, unknown>[];
  /** raw log text, for searching secrets */
  logText(): string;
  /** GET/POST/... against the server with the bootstrap token unless `token` is given */
  api(method: string, path: string, body?: unknown, opts?: { token?: string | null; headers?: Record<string, string> }): Promise<ApiResult>;
  stop(): Promise<void>;
}

export interface ApiResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/**
 * Requests against `baseUrl` with `Bearer defaultToken` unless `opts.token` says otherwise (null: no
 * token); a body that is not a string is sent as JSON.
 */
export function apiClient(baseUrl: string, defaultToken: string | null): TestServer["api"] {
  return async (method, path, body, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const tok = opts.token === undefined ? defaultToken : opts.token;
    if (tok) headers.authorization = `Bearer ${tok}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(baseUrl + path, { method, headers, body: payload });
    const text = await res.text();
    let json: unknown = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {}
    return { status: res.status, headers: res.headers, text, json };
  };
}

/**
 * Starts a real Vigil instance in this process, on 127.0.0.1 and a free port, with a fresh data
 * directory. `args` are extra `serve` flags.
 */
export async function startTestServer(args: string[] = [], overrides: InstanceOverrides & { dataDir?: string; keepData?: boolean } = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? tempDir();
  const lines: string[] = [];
  const instance = await startInstance(
    ["--data", dataDir, "--host", "127.0.0.1", "--port", "0", "--log-level", "debug", ...args, ...(await engineArgs(["--data", dataDir, ...args]))],
    {},
    { clock: overrides.clock, logSink: (l) => lines.push(l), heldResultsLimit: overrides.heldResultsLimit },
  );
  const token = (await Bun.file(join(dataDir, "bootstrap-token")).text()).trim();
  const url = instance.url;
  const api = apiClient(url, token);
  return {
    url,
    port: instance.port,
    dataDir,
    ctx: instance.ctx,
    instance,
    token,
    get logs() {
      return lines.map((l) => JSON.parse(l));
    },
    logText: () => lines.join("\n"),
    api,
    async stop() {
      await instance.shutdown();
      if (!overrides.keepData && !overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates another account with a token, straight through the store (as the CLI does). */
export async function makeAccount(ctx: AppContext, name: string, plan: Plan = "pro", scopes: readonly Scope[] = SCOPES): Promise<{ accountId: number; token: string }> {
  const account = await createAccount(ctx.db, name, plan, Date.now());
  const { token } = await issueApiToken(ctx.db, { accountId: account.id, scopes, label: name, now: Date.now() });
  return { accountId: account.id, token };
}

/** Polls `fn` until it returns a truthy value or the deadline passes; returns the last value. */
export async function waitFor<T>(fn: () => Promise<T> | T, { timeoutMs = 10_000, intervalMs = 25 } = {}): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T = await fn();
  while (!last && Date.now() < end) {
    await Bun.sleep(intervalMs);
    last = await fn();
  }
  return last;
}

/**
 * Waits for the server's start-up maintenance run to be done (true), or 10 s (false). Rollups or
 * checks seeded while it runs may be recomputed or packed under the test: on SQLite it runs on its
 * worker once that has started, which can be while the first tests seed.
 */
export function startupMaintenanceDone(s: TestServer): Promise<boolean> {
  return waitFor(() => s.logs.some((l) => l.component === "retention" && l.msg === "maintenance done"));
}
