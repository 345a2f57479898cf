/**
 * A throwaway Redis for the redis probe's tests, from Debian's `redis-server` package (`.ci/run`
 * installs it when missing): redis-server on a free 127.0.0.1 port with `requirepass` (the default
 * user's password) and an ACL user with its own password, no persistence, and optionally a TLS
 * port with the given certificate (Debian builds Redis with TLS). DEBUG is allowed from loopback so
 * a test can stall the server (`DEBUG SLEEP`). `cli()` runs redis-cli as the default user through a
 * unix socket in the temp dir. The server is killed and its dir removed by stop(), or when this
 * process ends (test/helpers/daemon.ts).
 *
 *   const r = await startRedis({ tls: certs });   // throws, naming the package, without the binaries
 *   probe(monitor({ target: r.url, db_password: r.password }))
 *   await r.cli("CLIENT", "LIST");
 *   await r.stop();
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guardServer, killAndWait, waitUntil } from "./daemon.ts";
import { freePort } from "./process.ts";

export const REDIS_MISSING = "redis-server and redis-cli not found: install Debian's `redis-server` package (apt-get install -y redis-server)";

export interface RedisServer {
  port: number;
  /** the TLS port, when started with `tls` */
  tlsPort: number | null;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** the default user's password (`requirepass`) */
  password: string;
  /** an ACL user and its password */
  aclUser: string;
  aclPassword: string;
  /** Runs one command as the default user; redis-cli's output. */
  cli(...args: string[]): Promise<string>;
  log(): string;
  stop(): Promise<void>;
}

export function redisBinaries(): { server: string; cli: string } | null {
  const dirs = ["/usr/bin", "/usr/local/bin", "/usr/sbin"];
  const find = (name: string) => dirs.map((d) => join(d, name)).find((p) => existsSync(p)) ?? null;
  const server = find("redis-server");
  const cli = find("redis-cli");
  return server && cli ? { server, cli } : null;
}

export interface RedisOptions {
  /** PEM files of the server certificate, its key and the CA; a TLS port is opened beside the plain one */
  tls?: { certPath: string; keyPath: string; caPath: string };
}

export async function startRedis(o: RedisOptions = {}): Promise<RedisServer> {
  const bins = redisBinaries();
  if (!bins) throw new Error(REDIS_MISSING);
  const dir = mkdtempSync(join(tmpdir(), "vigil-redis-"));
  const guard = guardServer(dir);
  const discard = () => {
    guard.release();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  };
  const conf = join(dir, "redis.conf");
  const sock = join(dir, "redis.sock");
  const logFile = join(dir, "redis.log");
  // passwords with characters that need quoting in a URL and in JSON, so every encoded copy is tested
  const password = `pw-${crypto.randomUUID().slice(0, 8)}/"+%`;
  const aclUser = "vigil";
  const aclPassword = `acl-${crypto.randomUUID().slice(0, 8)}/"+%`;
  const quote = (s: string) => `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
  const cliRun = (args: string[]) =>
    Bun.spawnSync([bins.cli, "-s", sock, ...args], { cwd: "/", stdout: "pipe", stderr: "pipe", timeout: 30_000, env: { ...process.env, REDISCLI_AUTH: password } });

  let port = 0;
  let tlsPort: number | null = null;
  let pid = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    tlsPort = o.tls ? await freePort() : null;
    const lines = [
      `port ${port}`,
      "bind 127.0.0.1",
      `unixsocket ${sock}`,
      "unixsocketperm 700",
      `requirepass ${quote(password)}`,
      `user ${aclUser} on ${quote(`>${aclPassword}`)} ~* &* +@all`,
      'save ""',
      "appendonly no",
      `dir ${dir}`,
      `logfile ${logFile}`,
      "enable-debug-command local",
      // the config path in the process title lets the watchdog tell this server by its dir
      'proc-title-template "{title} {listen-addr} {config-file}"',
      ...(o.tls && tlsPort
        ? [`tls-port ${tlsPort}`, `tls-cert-file ${o.tls.certPath}`, `tls-key-file ${o.tls.keyPath}`, `tls-ca-cert-file ${o.tls.caPath}`, "tls-auth-clients no"]
        : []),
    ];
    writeFileSync(conf, lines.join("\n") + "\n");
    const proc = Bun.spawn([bins.server, conf], { cwd: dir, stdout: "ignore", stderr: "ignore", stdin: "ignore" });
    pid = proc.pid;
    guard.serving(pid);
    try {
      await waitUntil(() => proc.exitCode !== null || (existsSync(sock) && cliRun(["PING"]).stdout.toString().trim() === "PONG"), 30_000, () => new Error("timed out"));
    } catch {}
    if (proc.exitCode === null && cliRun(["PING"]).stdout.toString().trim() === "PONG") break;
    await killAndWait(pid, "SIGKILL");
    if (attempt >= 5 || !/already in use|Could not create server TCP listening socket/i.test(log())) {
      const text = log();
      discard();
      throw new Error(`redis-server did not start: ${text}`);
    }
  }

  let stopped = false;
  return {
    port,
    tlsPort,
    url: `redis://127.0.0.1:${port}`,
    password,
    aclUser,
    aclPassword,
    async cli(...args) {
      // not spawnSync: a command the server holds back (CLIENT PAUSE) must not stall this process's timers
      const proc = Bun.spawn([bins.cli, "-s", sock, ...args], { cwd: "/", stdout: "pipe", stderr: "pipe", env: { ...process.env, REDISCLI_AUTH: password } });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      if (code !== 0) throw new Error(`redis-cli ${args.join(" ")} failed: ${err}`);
      return out;
    },
    log,
    async stop() {
      if (stopped) return;
      stopped = true;
      await killAndWait(pid, "SIGKILL");
      discard();
    },
  };
}
