/**
 * Child processes for the benches: the real server (`vigil serve`) and reference servers, each in
 * its own process as in production, plus CPU and RSS readings from /proc.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..", "..", "..");

export type Child = ReturnType<typeof Bun.spawn>;

/**
 * Spawns `cmd` and waits (30 s at most) for a stdout line matching `ready`; returns the child and
 * that line. Later stdout is drained; `onLine` sees every line (ready line included).
 */
export async function spawnUntil(
  cmd: string[],
  ready: (line: string) => boolean,
  opts: { env?: Record<string, string>; onLine?: (line: string) => void; timeoutMs?: number } = {},
): Promise<{ proc: Child; line: string }> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: "pipe", stderr: "inherit", env: { ...process.env, ...opts.env } });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let found: string | null = null;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const timer = setTimeout(() => proc.kill(9), Math.max(0, deadline - Date.now()));
  try {
    while (found === null) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        opts.onLine?.(line);
        if (found === null && ready(line)) found = line;
      }
    }
  } finally {
    clearTimeout(timer);
  }
  if (found === null) {
    proc.kill(9);
    throw new Error(`${cmd.join(" ")} did not start`);
  }
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (!opts.onLine) continue;
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        opts.onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    }
  })().catch(() => {});
  return { proc, line: found };
}

export interface VigilProcess {
  proc: Child;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** `vigil serve` on 127.0.0.1 and a free port, over `dataDir`. */
export async function startVigil(
  dataDir: string,
  extra: string[] = [],
  opts: { profileDir?: string | null; onLine?: (line: string) => void; env?: Record<string, string> } = {},
): Promise<VigilProcess> {
  const prof = opts.profileDir ? ["--cpu-prof-md", `--cpu-prof-dir=${opts.profileDir}`] : [];
  const { proc, line } = await spawnUntil(
    [process.execPath, ...prof, "src/main.ts", "serve", "--data", dataDir, "--host", "127.0.0.1", "--port", "0", ...extra],
    (l) => l.includes('"msg":"listening"'),
    { onLine: opts.onLine, env: opts.env, timeoutMs: 120_000 },
  );
  const url = JSON.parse(line).url as string;
  return {
    proc,
    url,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill(9), 20_000);
      await proc.exited;
      clearTimeout(killer);
    },
  };
}

const CLK_TCK = 100;
const PAGE = 4096;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/**
 * CPU seconds of a PostgreSQL server: the postmaster's own and its reaped children's (backends that
 * have exited, autovacuum workers), plus every child still running (the pools' backends, the writers).
 */
export function postgresCpuSeconds(postmaster: number): number {
  let ticks = 0;
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(p) === postmaster) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      else if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {}
  }
  return ticks / CLK_TCK;
}

/** Resident set size in bytes, from /proc/<pid>/statm. */
export function rssBytes(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * PAGE;
}

/** A CPU meter: percent of one core used by `pid` between `start()` and `read()`. */
export function cpuMeter(pid: number) {
  let t0 = performance.now();
  let c0 = cpuSeconds(pid);
  return {
    start() {
      t0 = performance.now();
      c0 = cpuSeconds(pid);
    },
    /** % of one core since start */
    read(): number {
      return ((cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000)) * 100;
    },
  };
}

export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

export function machine(): string {
  const mem = readFileSync("/proc/meminfo", "utf8").match(/MemTotal:\s+(\d+)/)?.[1];
  const cpus = navigator.hardwareConcurrency;
  return `${cpus} cores, ${mem ? (Number(mem) / 1024 / 1024).toFixed(1) : "?"} GiB, load ${loadAverage()}, bun ${Bun.version}`;
}

/** Waits (bounded) until `pid` uses under `pct`% of a core over `windowMs`: start-up work is done. */
export async function waitIdle(pid: number, pct = 15, windowMs = 2000, maxMs = 120_000): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < maxMs) {
    const m = cpuMeter(pid);
    await Bun.sleep(windowMs);
    if (m.read() < pct) break;
  }
  return Date.now() - start;
}
