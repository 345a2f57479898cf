/**
 * Fixture data for the benches, written straight into a store with prepared bun:sqlite statements
 * in 1000-row transactions (the API would take minutes for 100,000 monitors).
 */
import type { SqliteStore } from "../../../src/store/database.ts";

export interface MonitorSeed {
  type: "http" | "tcp";
  /** http: a URL; tcp: host:port */
  target: string;
  intervalSec: number;
  /** when the monitor is next due (epoch ms); as if it had run one interval before */
  nextRunAt: number;
  name?: string;
}

export function seedAccount(store: SqliteStore, name = "default"): number {
  const row = store.sqlite.query("INSERT INTO accounts (name, plan, created_at) VALUES (?, 'enterprise', ?) RETURNING id").get(name, Date.now()) as { id: number };
  return row.id;
}

/** Inserts monitors in 1000-row transactions; returns the first id. */
export function seedMonitors(store: SqliteStore, accountId: number, count: number, spec: (i: number) => MonitorSeed): number {
  const insert = store.sqlite.prepare(
    `INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at, last_checked_at, next_run_at, last_status, state_changed_at)
     VALUES (?, ?, ?, ?, ?, 5000, ?, ?, ?, ?, 'up', ?)`,
  );
  const now = Date.now();
  let first = 0;
  for (let i = 0; i < count; i += 1000) {
    store.sqlite.transaction(() => {
      for (let j = i; j < Math.min(count, i + 1000); j++) {
        const s = spec(j);
        const res = insert.run(accountId, s.name ?? `${s.type} ${j}`, s.type, s.target, s.intervalSec, now, now, s.nextRunAt - s.intervalSec * 1000, s.nextRunAt, now);
        if (j === 0) first = Number(res.lastInsertRowid);
      }
    })();
  }
  return first;
}

/**
 * `minutes` of check history for monitors checked every `intervalSec`, ending just before each
 * one's next due time, written in time order across monitors as a server writes them (so ids and
 * the (monitor, time) index grow as they would): up, latency 1-40 ms. `due` gives each monitor's id
 * and next due time. Returns the rows written.
 */
export function seedCheckHistory(store: SqliteStore, due: { id: number; nextRunAt: number }[], intervalSec: number, minutes: number, region = "local"): number {
  const rounds = Math.floor((minutes * 60) / intervalSec);
  const insert = store.sqlite.prepare("INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms) VALUES (?, ?, 'up', ?, ?)");
  const byDue = [...due].sort((a, b) => a.nextRunAt - b.nextRunAt);
  let n = 0;
  for (let k = rounds; k >= 1; k--) {
    for (let i = 0; i < byDue.length; i += 10_000) {
      store.sqlite.transaction(() => {
        for (const m of byDue.slice(i, i + 10_000)) {
          insert.run(m.id, region, m.nextRunAt - k * intervalSec * 1000, 1 + ((m.id * 7 + k * 13) % 40));
          n++;
        }
      })();
    }
  }
  return n;
}
