/**
 * Real receivers on loopback for the notification tests, and a bare context (real store in a temp
 * directory, no services) for driving a dispatcher with short backoff.
 */
import { rmSync } from "node:fs";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox, type AppContext } from "../../src/context.ts";
import { applyStateChange, type StateChange } from "../../src/engine/state-change.ts";
import type { MonitorState } from "../../src/domain/monitor.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { openTestStore } from "../helpers/engine.ts";
import type { NewMonitorRow } from "../../src/store/tables.ts";
import { tempDir } from "../helpers/server.ts";

export interface ReceivedRequest {
  method: string;
  path: string;
  search: URLSearchParams;
  headers: Headers;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** decides each answer; default 200 "ok" */
  respond: (req: ReceivedRequest, n: number) => Response | Promise<Response>;
  stop(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records every request. */
export function startReceiver(respond?: Receiver["respond"]): Receiver {
  const r: Receiver = {
    url: "",
    requests: [],
    respond: respond ?? (() => new Response("ok")),
    stop: async () => void server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const u = new URL(request.url);
      const rec: ReceivedRequest = { method: request.method, path: u.pathname, search: u.searchParams, headers: request.headers, body: await request.text(), at: Date.now() };
      r.requests.push(rec);
      return r.respond(rec, r.requests.length);
    },
  });
  r.url = `http://127.0.0.1:${server.port}`;
  return r;
}

export interface Harness {
  ctx: AppContext;
  accountId: number;
  lines: string[];
  close(): Promise<void>;
}

export async function harness(args: string[] = []): Promise<Harness> {
  const dataDir = tempDir("vigil-notify-");
  const config = loadConfig(["--data", dataDir, "--log-level", "debug", "--base-url", "https://vigil.example.com", ...args], {});
  const lines: string[] = [];
  const store = await openTestStore(dataDir);
  const ctx = buildContext({ config, store, log: createLogger("debug", "vigil", (l) => lines.push(l)), clock: { now: () => Date.now() }, secrets: loadSecretBox(dataDir, null) });
  const account = await createAccount(ctx.db, "acme", "pro", Date.now());
  return {
    ctx,
    accountId: account.id,
    lines,
    async close() {
      await ctx.writes.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function insertMonitorRow(ctx: AppContext, accountId: number, over: Partial<NewMonitorRow> = {}): Promise<number> {
  const now = Date.now();
  const row = await ctx.db
    .insertInto("monitors")
    .values({ account_id: accountId, name: "Checkout API", monitor_type: "http", target: "https://shop.example.com/health", interval_sec: 60, timeout_ms: 2000, created_at: now, updated_at: now, ...over })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Flips a monitor the one way the engine does (applyStateChange in a transaction), then announces it. */
export async function flip(ctx: AppContext, monitorId: number, to: MonitorState, over: Partial<StateChange> & { at?: number } = {}) {
  const at = over.at ?? Date.now();
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const monitor = await trx.selectFrom("monitors").selectAll().where("id", "=", monitorId).executeTakeFirstOrThrow();
    return applyStateChange(trx, ctx, {
      monitor,
      to,
      at,
      checkId: null,
      errorCode: to === "down" ? "http_error" : null,
      errorMessage: to === "down" ? "expected 200-299, got 503" : null,
      httpCode: to === "down" ? 503 : null,
      ...over,
    });
  });
  if (outcome.changed) ctx.events.emit("monitor.state", { monitorId, accountId: 0, from: outcome.from, to, at });
  return outcome;
}

export async function linkChannel(ctx: AppContext, monitorId: number, channelId: number): Promise<void> {
  await ctx.db.insertInto("monitor_channels").values({ monitor_id: monitorId, channel_id: channelId }).execute();
}
