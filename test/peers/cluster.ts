import { openTestStore } from "../helpers/engine.ts";
import { spawnServer } from "../helpers/process.ts";

/** A `vigil serve` child process whose output the test reads as parsed JSON log lines. */
export interface VigilProcess {
  name: string;
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  output(): string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  lines(): any[];
  /** SIGTERM (graceful) or SIGKILL, then wait for the exit; returns the exit code */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<number>;
}

/**
 * Starts `vigil serve` on a given loopback port (a restarted leader must come back where its probes
 * look for it) and waits until /healthz answers.
 */
export async function startVigil(name: string, port: number, args: string[], timeoutMs = 20_000): Promise<VigilProcess> {
  const { proc, url, output } = await spawnServer(args, { port, name, timeoutMs });
  return {
    name,
    url,
    proc,
    output,
    lines: () =>
      output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .flatMap((l) => {
          try {
            return [JSON.parse(l)];
          } catch {
            return [];
          }
        }),
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return await proc.exited;
    },
  };
}

/** result_uid → {monitor_id, checked_at} of every result a probe process logged as spooled. */
export function spooledResults(processes: VigilProcess[]): Map<string, { monitorId: number; checkedAt: number; at: number }> {
  const out = new Map<string, { monitorId: number; checkedAt: number; at: number }>();
  for (const p of processes) {
    for (const l of p.lines()) if (l.msg === "result spooled") out.set(l.result_uid, { monitorId: l.monitor_id, checkedAt: l.checked_at, at: Date.parse(l.time) });
  }
  return out;
}

/** Monitor ids of the results still in a stopped probe's spool. */
export async function remainingInSpool(dataDir: string): Promise<number[]> {
  const store = await openTestStore(dataDir);
  try {
    return (await store.db.selectFrom("spool").select("payload_json").execute()).map((r) => JSON.parse(r.payload_json).monitor_id as number);
  } finally {
    await store.close();
  }
}
