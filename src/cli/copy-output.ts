import { join } from "node:path";
import { SECRET_KEY_FILE } from "../context.ts";
import type { CopyProgress, CopyReport } from "../store/engine-copy.ts";
import { countMismatches } from "../store/engine-copy.ts";
import type { CliIo } from "./io.ts";

const n = (v: number) => v.toLocaleString("en-US");

/**
 * Progress of a copy between engines on stderr: a line per table when it is done, and while a
 * table takes longer, a line a second with rows copied of its total and the rate.
 */
export function progressPrinter(io: CliIo, everyMs = 1000): { onProgress: (p: CopyProgress) => void; rows: () => number } {
  let table = "";
  let started = 0;
  let lastLine = 0;
  let rows = 0;
  let before = 0;
  return {
    onProgress(p) {
      const now = performance.now();
      if (p.table !== table) {
        table = p.table;
        started = lastLine = now;
        before = 0;
      }
      rows += p.copied - before;
      before = p.copied;
      const seconds = (now - started) / 1000;
      const rate = Math.round(p.copied / Math.max(seconds, 0.001));
      if (p.copied >= p.total) {
        // a rate over a few milliseconds says nothing: given from a second on
        io.err(`  ${p.table}: ${n(p.copied)} ${p.copied === 1 ? "row" : "rows"} in ${seconds.toFixed(1)} s${seconds >= 1 ? ` (${n(rate)} rows/s)` : ""}`);
      } else if (now - lastLine >= everyMs) {
        lastLine = now;
        io.err(`  ${p.table}: ${n(p.copied)} / ${n(p.total)} rows (${Math.floor((p.copied / p.total) * 100)}%), ${n(rate)} rows/s`);
      }
    },
    rows: () => rows,
  };
}

/** Prints the count check; false when a table's counts differ (then `remedy` says what to do). */
export function reportCounts(io: CliIo, report: CopyReport, from: string, to: string, remedy: string): boolean {
  if (report.nulReplaced > 0) {
    io.err(`warning: ${n(report.nulReplaced)} text values held NUL characters, which PostgreSQL cannot store in text; each was written with U+FFFD in its place`);
  }
  const differing = countMismatches(report);
  if (differing.length === 0) return true;
  io.err(`error: the row counts differ after the copy:`);
  for (const t of differing) io.err(`  ${t.name}: ${n(t.source)} rows in ${from}, ${n(t.target)} in ${to}`);
  io.err(remedy);
  return false;
}

/** Where the key for stored secrets is, which the copy does not carry, and what every instance needs. */
export function secretKeyNote(io: CliIo, dataDir: string): void {
  if (io.env.VIGIL_SECRET_KEY) {
    io.out("Stored secrets (monitor credentials, notification settings) are sealed with the key in VIGIL_SECRET_KEY, which no database holds: give every instance the same VIGIL_SECRET_KEY.");
  } else {
    io.out(
      `Stored secrets (monitor credentials, notification settings) are sealed with the key in ${join(dataDir, SECRET_KEY_FILE)}, which no database holds: ` +
        `every instance needs that same key, in VIGIL_SECRET_KEY (its contents) or as ${SECRET_KEY_FILE} in its --data directory.`,
    );
  }
}
