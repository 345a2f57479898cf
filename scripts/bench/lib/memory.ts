/**
 * Memory per monitor at growing counts, for the scheduler and heartbeat benches: a server's RSS
 * with N monitors minus an empty server's, divided by N, beside the reference of one plain
 * setTimeout per monitor measured in a process of its own.
 */
import { fmt } from "./load.ts";
import { spawnUntil } from "./proc.ts";

const MiB = 1024 * 1024;

const TIMER_REFERENCE = `
const n = Number(process.argv[1] ?? process.argv[2]);
Bun.gc(true);
const before = process.memoryUsage().rss;
const keep = [];
for (let i = 0; i < n; i++) { const m = { id: i, next: Date.now() + 60000 + i }; keep.push(setTimeout(() => m.id, 3_600_000)); }
Bun.gc(true);
await Bun.sleep(500);
console.log("timers " + (process.memoryUsage().rss - before));
process.exit(0);
`;

/** Bytes of RSS per plain setTimeout, with `n` of them pending. */
export async function timerReferenceBytes(n: number): Promise<number> {
  const ref = await spawnUntil([process.execPath, "-e", TIMER_REFERENCE, String(n)], (l) => l.startsWith("timers "));
  await ref.proc.exited;
  return Number(ref.line.slice(7)) / n;
}

/**
 * Prints the table: `rssWith(n)` starts a server with n monitors in the state to measure and
 * returns its RSS in bytes (n = 0: the empty server).
 */
export async function memoryTable(what: string, counts: readonly number[], rssWith: (n: number) => Promise<number>): Promise<void> {
  const base = await rssWith(0);
  console.log(`  empty server        ${fmt(base / MiB)} MiB`);
  console.log(`  ${what.padStart(8)}     RSS MiB   bytes/monitor   reference: bytes per plain setTimeout`);
  for (const n of counts) {
    const rss = await rssWith(n);
    const ref = await timerReferenceBytes(n);
    console.log(`  ${fmt(n).padStart(8)} ${fmt(rss / MiB).padStart(11)} ${fmt((rss - base) / n).padStart(15)}   ${fmt(ref).padStart(10)}`);
  }
}
