/**
 * What the throwaway database servers of the probe tests (mariadb-server.ts, redis-server.ts)
 * share: a server process started by this process must not outlive it. On exit, SIGINT or SIGTERM
 * each live server is killed by its PID and its temp dir removed; since `bun test` fires no 'exit'
 * event (nor does a SIGKILL), a detached watchdog shell per server does the same once this process
 * is gone. The same pattern as test/helpers/postgres.ts, for servers we spawn ourselves.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** True while `pid` runs; a zombie (exited, not yet reaped) counts as gone. */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!);
  } catch {
    return false;
  }
}

/** Sends `signal` to `pid` and waits (bounded) for it to go; SIGKILL when it outstays `graceMs`. */
export async function killAndWait(pid: number, signal: NodeJS.Signals = "SIGTERM", graceMs = 10_000): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (processRunning(pid) && Date.now() < deadline) await Bun.sleep(20);
  if (processRunning(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

const live = new Map<string, () => void>();
let hooked = false;

function cleanUpLive() {
  for (const cleanup of live.values()) cleanup();
  live.clear();
}

function hookExit() {
  if (hooked) return;
  hooked = true;
  process.on("exit", cleanUpLive);
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    process.on(signal, () => {
      cleanUpLive();
      process.exit(code);
    });
  }
}

/** True when `pid` runs a command line naming `marker`: the server we started, not a process that took its PID since. */
function isOurs(pid: number, marker: string): boolean {
  try {
    return processRunning(pid) && readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(marker);
  } catch {
    return false;
  }
}

export interface ServerGuard {
  /** Names the server process once spawned (and again after a restart). */
  serving(pid: number): void;
  /** Call on a normal stop, before removing the dir (which ends the watchdog). */
  release(): void;
}

const PID_FILE = "guarded.pid";

/**
 * Ties the temp dir `dir`, and the server that will run in it, to this process: when this process
 * ends, however it ends, the server is killed (SIGKILL: nothing in it has to survive) and `dir`
 * removed. Call it as soon as `dir` exists, so a run killed while the server is still being set up
 * leaves nothing either. The server's command line (as /proc shows it, after any retitling) must
 * name `dir`: it is checked before the kill, so a PID reused since is never signalled.
 */
export function guardServer(dir: string): ServerGuard {
  let pid: number | null = null;
  const cleanup = () => {
    if (pid !== null && isOurs(pid, dir)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
      const deadline = Date.now() + 2000;
      while (processRunning(pid) && Date.now() < deadline) Bun.sleepSync(20);
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  };
  live.set(dir, cleanup);
  hookExit();
  const pidFile = join(dir, PID_FILE);
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null && [ -d '${dir}' ]; do sleep 1; done`,
    `[ -d '${dir}' ] || exit 0`,
    `pid=$(cat '${pidFile}' 2>/dev/null)`,
    `if [ -n "$pid" ] && grep -qaF -- '${dir}' /proc/$pid/cmdline 2>/dev/null; then`,
    `  kill -KILL "$pid"; i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done`,
    `fi`,
    `rm -rf '${dir}'`,
  ].join("\n");
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore", cwd: "/" }).unref();
  return {
    serving(p) {
      pid = p;
      writeFileSync(pidFile, String(p));
    },
    release() {
      live.delete(dir);
    },
  };
}

/** uid/gid of a system account, or null when it does not exist. */
export function accountIds(user: string): { user: string; uid: number; gid: number } | null {
  const u = spawnSync("id", ["-u", user], { encoding: "utf8" });
  const g = spawnSync("id", ["-g", user], { encoding: "utf8" });
  if (u.status !== 0 || g.status !== 0) return null;
  return { user, uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** Polls `ready` every 50 ms until it is true; throws `failure()` after `timeoutMs`. */
export async function waitUntil(ready: () => boolean | Promise<boolean>, timeoutMs: number, failure: () => Error): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw failure();
    await Bun.sleep(50);
  }
}
