import { splitJournalable, applyToCache } from "../src/heartbeat/journalable.ts";
import type { HeartbeatOp } from "../src/heartbeat/apply-batch.ts";
const rows = new Map<number, any>();
for (let id = 1; id <= 10000; id++) rows.set(id, { id, account_id: 1, monitor_type: "heartbeat", heartbeat_token: "tok" + id, is_paused: 0, is_in_maintenance: 0, last_status: "up", state_changed_at: 1, last_checked_at: 1, interval_sec: 60, heartbeat_period_sec: 60, heartbeat_grace_sec: 60, heartbeat_schedule: null, heartbeat_timezone: "UTC", heartbeat_last_ping_at: 1, heartbeat_last_start_at: null, heartbeat_deadline_at: 1, heartbeat_payload_policy: "none", heartbeat_payload_status_key: null, heartbeat_notify_on_late: 0, updated_at: 1 });
let next = 0, k = 0;
const batches: HeartbeatOp[][] = [];
for (let b = 0; b < 2000; b++) { const ops: HeartbeatOp[] = []; for (let i = 0; i < 21; i++) { const id = (k++ % 10000) + 1; ops.push({ type: "ping", at: Date.now(), ping: { monitorId: id, token: "tok" + id, kind: "ping", sourceIp: "127.0.0.1", body: null, failReason: null } }); } batches.push(ops); }
for (let r = 0; r < 5; r++) {
  const t0 = performance.now(); let n = 0;
  for (const ops of batches) { const s = splitJournalable(ops, rows, () => ++next); applyToCache(s.journal); n += ops.length; }
  const t1 = performance.now();
  let enc = 0;
  for (const ops of batches) { const s = splitJournalable(ops, rows, () => ++next); enc += JSON.stringify(s.journal.entries.map((e) => [e.id, e.monitorId, e.at, e.sourceIp, e.durationMs, e.deadlineAt])).length; }
  const t2 = performance.now();
  console.log("split+apply µs/ping", ((t1 - t0) * 1000 / n).toFixed(3), " split+encode", ((t2 - t1) * 1000 / n).toFixed(3));
}
