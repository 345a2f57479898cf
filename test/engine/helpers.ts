/**
 * A real store in a temp directory with a context around it, for engine and scheduler tests that
 * drive the scheduler's internals (run now, short re-check) instead of waiting for intervals.
 */
import { rmSync } from "node:fs";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox, type AppContext } from "../../src/context.ts";
import type { CheckResult } from "../../src/domain/check-result.ts";
import type { Clock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { openTestStore } from "../helpers/engine.ts";
import type { NewMonitorRow } from "../../src/store/tables.ts";
import { tempDir } from "../helpers/server.ts";

export interface EngineHarness {
  ctx: AppContext;
  accountId: number;
  lines: string[];
  logs(): Record<string, unknown>[];
  close(): Promise<void>;
}

export async function engineHarness(args: string[] = [], clock?: Clock): Promise<EngineHarness> {
  const dataDir = tempDir("vigil-engine-");
  const config = loadConfig(["--data", dataDir, "--log-level", "debug", ...args], {});
  const lines: string[] = [];
  const log = createLogger("debug", "vigil", (l) => lines.push(l));
  const store = await openTestStore(dataDir);
  const ctx = buildContext({ config, store, log, clock: clock ?? { now: () => Date.now() }, secrets: loadSecretBox(dataDir, null) });
  const account = await createAccount(ctx.db, "acme", "pro", Date.now());
  return {
    ctx,
    accountId: account.id,
    lines,
    logs: () => lines.map((l) => JSON.parse(l)),
    async close() {
      await ctx.writes.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Inserts a monitor row straight through Kysely, as the API would store it. */
export async function insertMonitor(h: EngineHarness, over: Partial<NewMonitorRow> = {}): Promise<number> {
  const now = Date.now();
  const row = await h.ctx.db
    .insertInto("monitors")
    .values({ account_id: h.accountId, name: "m", monitor_type: "http", target: "http://127.0.0.1:9/", interval_sec: 60, timeout_ms: 2000, created_at: now, updated_at: now, ...over })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export function result(status: CheckResult["status"], over: Partial<CheckResult> = {}): CheckResult {
  return {
    status,
    checked_at: Date.now(),
    latency_ms: 12,
    http_code: status === "down" ? 503 : 200,
    error_code: status === "down" ? "http_error" : null,
    error_message: status === "down" ? "expected 200-299, got 503" : null,
    degraded_reason: status === "degraded" ? "slow" : null,
    resolved_ip: "127.0.0.1",
    ssl_not_after: null,
    ssl_issuer: null,
    dns_answer: null,
    synthetic_trace_json: null,
    timings: null,
    ...over,
  };
}
