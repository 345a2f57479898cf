/**
 * A throwaway PostgreSQL for tests and benches, from Debian's server binaries (the `postgresql`
 * package; `.ci/run` installs it when missing): initdb in a temp dir, trust authentication (initdb
 * writes host lines for 127.0.0.1 and ::1 only, and the server listens on 127.0.0.1 alone), a free
 * loopback port, the unix socket inside the temp dir, and durability off (fsync, synchronous_commit,
 * full_page_writes), since nothing in it has to survive a crash of the machine.
 *
 * PostgreSQL refuses to run as root. Under root (CI, this box) initdb and the server run as Debian's
 * `postgres` account, which the package creates, or `nobody` when that account is absent; both
 * exist on any Debian with the package, so no account is ever created. The temp dir is handed to
 * that account, and root, as the one who started it, stops it and removes the dir.
 *
 *   const pg = await startPostgres();          // null (and a loud message) without the binaries
 *   const url = await pg.createDatabase();     // a fresh, empty database per test file
 *   ... pg.stopServer(); pg.startServer();     // the same cluster down and up again, same port
 *   await pg.stop();                           // pg_ctl stop -m fast, then the dir is removed
 */
import { SQL } from "bun";
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const MISSING_MESSAGE =
  "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: install Debian's `postgresql` package (apt-get install -y postgresql)";

const TOOLS = ["initdb", "pg_ctl", "postgres"];

function hasTools(dir: string): boolean {
  return TOOLS.every((t) => existsSync(join(dir, t)));
}

/**
 * Where initdb, pg_ctl and postgres are: VIGIL_PG_BINDIR alone when set (to pick a version), else
 * the newest /usr/lib/postgresql/<version>/bin (Debian keeps them off PATH), else
 * `pg_config --bindir`, else the directory `initdb` on PATH resolves to. Null when none has all three.
 */
export function postgresBinDir(): string | null {
  if (process.env.VIGIL_PG_BINDIR) return hasTools(process.env.VIGIL_PG_BINDIR) ? process.env.VIGIL_PG_BINDIR : null;
  const candidates: string[] = [];
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(debian, v, "bin"));
  }
  const pgConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (pgConfig.status === 0) candidates.push(pgConfig.stdout.trim());
  const which = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" });
  if (which.status === 0 && which.stdout.trim()) candidates.push(dirname(realpathSync(which.stdout.trim())));
  return candidates.find(hasTools) ?? null;
}

let warned = false;

/** True when a server can be started; otherwise says so loudly (once) so a skip is never silent. */
export function postgresAvailable(what = "PostgreSQL tests"): boolean {
  if (postgresBinDir()) return true;
  if (!warned) console.error(`\n!!! ${what} SKIPPED: ${MISSING_MESSAGE} !!!\n`);
  warned = true;
  return false;
}

export interface PostgresServer {
  host: string;
  port: number;
  /** the superuser the URLs connect as (trust authentication, no password) */
  user: string;
  /** the temp dir holding the cluster (`data/`), its socket dir (`sock/`) and the server log */
  dir: string;
  /** the server's major version, e.g. 15 */
  version: number;
  url(database?: string): string;
  /** Creates an empty database (a fresh name unless given) and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (fast shutdown: open sessions are cut), keeping the cluster. */
  stopServer(): Promise<void>;
  /** Starts the stopped server again on the same port. */
  startServer(): Promise<void>;
  /** PID of the running postmaster (from postmaster.pid), or null when stopped. */
  pid(): number | null;
  /** Stops the server and removes the temp dir. */
  stop(): Promise<void>;
}

interface RunAs {
  user: string;
  uid: number;
  gid: number;
}

function accountOf(user: string): RunAs | null {
  const r = spawnSync("id", ["-u", user], { encoding: "utf8" });
  const g = spawnSync("id", ["-g", user], { encoding: "utf8" });
  if (r.status !== 0 || g.status !== 0) return null;
  return { user, uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** The unprivileged account the server runs as when we are root; null when we are not root. */
function serverAccount(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const account = accountOf("postgres") ?? accountOf("nobody");
  if (!account) throw new Error("running as root, and neither a `postgres` nor a `nobody` account exists to run PostgreSQL as");
  return account;
}

function run(bin: string, args: string[], as: RunAs | null, timeoutMs: number): { code: number; out: string } {
  const cmd = as ? ["runuser", "-u", as.user, "--", bin, ...args] : [bin, ...args];
  // The tools' own working directory must be readable by the account (root's cwd may not be).
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: "utf8", cwd: "/", timeout: timeoutMs });
  return { code: r.status ?? -1, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

/** Servers started by this process and not stopped yet: what exit and signal handlers clean up. */
const live = new Set<() => void>();

function cleanUpLive() {
  for (const cleanup of live) cleanup();
  live.clear();
}

let hooked = false;

/**
 * A test file that throws before its afterAll, forgets stop(), or a bench interrupted by Ctrl-C
 * or `timeout` must not leave a server behind: on exit, SIGINT or SIGTERM every server this
 * process started gets SIGQUIT (immediate shutdown) by its PID and its dir is removed. `bun test`
 * fires no 'exit' event, though (nor does a SIGKILL), so each server also has a watchdog: see
 * watchOver().
 */
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

/**
 * A small shell, detached from this process, that waits for this process to end and then does
 * what the exit hook would: SIGQUIT to the postmaster named in postmaster.pid (its PID changes
 * across stopServer/startServer), up to 5 s for it to go, then removes the dir. It ends by itself
 * once the dir is gone (stop() ran). The shell runs as the one who started the server, who may
 * signal it and remove its dir. Polls once a second: the suite's run for the whole suite costs
 * nothing noticeable.
 */
function watchOver(dir: string): void {
  const data = join(dir, "data");
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null && [ -d '${dir}' ]; do sleep 1; done`,
    `[ -d '${dir}' ] || exit 0`,
    `pid=$(head -n 1 '${data}/postmaster.pid' 2>/dev/null)`,
    `if [ -n "$pid" ]; then kill -QUIT "$pid" 2>/dev/null; i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; fi`,
    `rm -rf '${dir}'`,
  ].join("\n");
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore", cwd: "/" }).unref();
}

/** True while `pid` runs; a zombie (exited, not yet reaped) counts as gone. */
function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!);
  } catch {
    return false;
  }
}

async function freeLoopbackPort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** Starts a fresh cluster; null (after a loud message) when the binaries are missing. */
export async function startPostgres(): Promise<PostgresServer | null> {
  const bin = postgresBinDir();
  if (!bin) {
    postgresAvailable();
    return null;
  }
  const as = serverAccount();
  const dir = mkdtempSync(join(tmpdir(), "vigil-pg-"));
  const data = join(dir, "data");
  const sock = join(dir, "sock");
  const logFile = join(dir, "server.log");
  mkdirSync(sock);
  if (as) for (const p of [dir, sock]) chownSync(p, as.uid, as.gid);
  const user = "postgres";
  const tool = (name: string) => join(bin, name);

  const cleanup = () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  const init = run(tool("initdb"), ["-D", data, "-U", user, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"], as, 120_000);
  if (init.code !== 0) {
    cleanup();
    throw new Error(`initdb failed (${init.code}): ${init.out}`);
  }
  const version = Number(readFileSync(join(data, "PG_VERSION"), "utf8").trim());
  const settings: Record<string, string | number> = {
    listen_addresses: "'127.0.0.1'",
    unix_socket_directories: `'${sock}'`,
    fsync: "off",
    synchronous_commit: "off",
    full_page_writes: "off",
    max_connections: 200,
  };
  const conf = (extra: Record<string, string | number>) =>
    appendFileSync(join(data, "postgresql.conf"), "\n" + Object.entries(extra).map(([k, v]) => `${k} = ${v}`).join("\n") + "\n");
  conf(settings);

  const pidOf = (): number | null => {
    try {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  };
  const start = () => run(tool("pg_ctl"), ["start", "-D", data, "-w", "-t", "60", "-l", logFile], as, 90_000);

  // The port is free when picked but another process may take it before the server binds: retry.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freeLoopbackPort();
    conf({ port });
    const r = start();
    if (r.code === 0) break;
    const log = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
    if (attempt >= 5 || !/could not bind|already in use/i.test(log)) {
      const pid = pidOf();
      if (pid) process.kill(pid, "SIGKILL");
      cleanup();
      throw new Error(`PostgreSQL did not start (pg_ctl ${r.code}): ${r.out}\n${log}`);
    }
  }

  const host = "127.0.0.1";
  const url = (database = "postgres") => `postgres://${user}@${host}:${port}/${database}`;
  let admin: SQL | null = null;
  let running = true;
  let removed = false;

  // Exit handlers cannot await: wait (2 s at most) for the postmaster to go before removing its
  // dir, or files it writes while shutting down are left behind.
  const onExit = () => {
    const pid = pidOf();
    if (pid) {
      try {
        process.kill(pid, "SIGQUIT");
      } catch {}
      const deadline = Date.now() + 2000;
      while (processRunning(pid) && Date.now() < deadline) Bun.sleepSync(20);
    }
    cleanup();
  };
  live.add(onExit);
  hookExit();
  watchOver(dir);

  const stopServer = async () => {
    if (!running) return;
    running = false;
    await admin?.close({ timeout: 0 }).catch(() => {});
    admin = null;
    const pid = pidOf();
    const r = run(tool("pg_ctl"), ["stop", "-D", data, "-m", "fast", "-w", "-t", "30"], as, 45_000);
    if (r.code !== 0 && pid) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  };

  return {
    host,
    port,
    user,
    dir,
    version,
    url,
    async createDatabase(name) {
      const db = name ?? `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
      if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`not a plain database name: ${db}`);
      admin ??= new SQL({ url: url(), max: 1 });
      await admin.unsafe(`CREATE DATABASE ${db}`);
      return url(db);
    },
    stopServer,
    async startServer() {
      if (running) return;
      const r = start();
      if (r.code !== 0) throw new Error(`PostgreSQL did not start again (pg_ctl ${r.code}): ${r.out}\n${readFileSync(logFile, "utf8")}`);
      running = true;
    },
    pid: () => (running ? pidOf() : null),
    async stop() {
      if (removed) return;
      await stopServer();
      removed = true;
      live.delete(onExit);
      cleanup();
    },
  };
}
