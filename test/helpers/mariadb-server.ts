/**
 * A throwaway MariaDB for the mysql probe's tests, from Debian's `mariadb-server` package (`.ci/run`
 * installs it when missing): mariadb-install-db into a temp dir, mariadbd on a free 127.0.0.1 port
 * with the grant tables on (passwords are checked), one database and a user with a password made at
 * start, and optionally TLS with the given certificate (then also a user that may only log in over
 * TLS). Root logs in without a password over the unix socket in the temp dir, for `admin()`.
 *
 * Under root (CI, this box) the server runs as Debian's `mysql` account, which the package creates
 * (mariadbd switches to it itself); the temp dir is handed to that account. The server is killed
 * and its dir removed by stop(), or when this process ends (test/helpers/daemon.ts).
 *
 *   const db = await startMariadb({ tls: certs });   // throws, naming the package, without the binaries
 *   probe(monitor({ target: db.url, db_password: db.password }))
 *   await db.admin("SHOW PROCESSLIST");            // tab-separated rows, as the mariadb client prints them
 *   await db.stop();
 */
import { chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accountIds, guardServer, killAndWait, waitUntil } from "./daemon.ts";
import { freePort } from "./process.ts";

export const MARIADB_MISSING =
  "MariaDB server binaries (mariadbd, mariadb-install-db, mariadb) not found: install Debian's `mariadb-server` package (apt-get install -y mariadb-server)";

export interface MariadbServer {
  host: string;
  port: number;
  /** the user with a password, and its database: `mysql://vigil@127.0.0.1:<port>/vigil_probe` */
  user: string;
  password: string;
  database: string;
  url: string;
  /** a user that may only log in over TLS (`REQUIRE SSL`), when started with `tls`; same password */
  tlsUser: string | null;
  /** Runs SQL as root through the unix socket; the rows as the mariadb client prints them in batch mode. */
  admin(sql: string): Promise<string>;
  /** The server's error log, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

function binary(name: string, dirs: string[]): string | null {
  for (const d of dirs) if (existsSync(join(d, name))) return join(d, name);
  return null;
}

/** Where mariadbd, mariadb-install-db and the mariadb client are; null when one is missing. */
export function mariadbBinaries(): { server: string; install: string; client: string } | null {
  const dirs = ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];
  const server = binary("mariadbd", dirs);
  const install = binary("mariadb-install-db", dirs);
  const client = binary("mariadb", dirs);
  return server && install && client ? { server, install, client } : null;
}

export interface MariadbOptions {
  /** PEM files of the server certificate, its key and the CA; TLS is then offered on the same port */
  tls?: { certPath: string; keyPath: string; caPath: string };
}

export async function startMariadb(o: MariadbOptions = {}): Promise<MariadbServer> {
  const bins = mariadbBinaries();
  if (!bins) throw new Error(MARIADB_MISSING);
  const as = process.getuid?.() === 0 ? accountIds("mysql") : null;
  const dir = mkdtempSync(join(tmpdir(), "vigil-mariadb-"));
  const data = join(dir, "data");
  const sock = join(dir, "mariadb.sock");
  const logFile = join(dir, "error.log");
  const guard = guardServer(dir);
  const discard = () => {
    guard.release();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  };
  const userArgs = process.getuid?.() === 0 ? [`--user=${as?.user ?? "root"}`] : [];
  if (as) chownSync(dir, as.uid, as.gid);

  const install = Bun.spawnSync(
    [bins.install, "--no-defaults", `--datadir=${data}`, "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve", ...userArgs,
      "--innodb-log-file-size=8M", "--skip-log-bin"],
    { cwd: "/", stdout: "pipe", stderr: "pipe", timeout: 120_000 },
  );
  if (install.exitCode !== 0) {
    discard();
    throw new Error(`mariadb-install-db failed (${install.exitCode}): ${install.stdout.toString()}${install.stderr.toString()}`);
  }

  const tlsArgs: string[] = [];
  if (o.tls) {
    const tlsDir = join(dir, "tls");
    mkdirSync(tlsDir);
    for (const [from, name] of [[o.tls.certPath, "cert.pem"], [o.tls.keyPath, "key.pem"], [o.tls.caPath, "ca.pem"]] as const) {
      copyFileSync(from, join(tlsDir, name));
      if (as) chownSync(join(tlsDir, name), as.uid, as.gid);
    }
    if (as) chownSync(tlsDir, as.uid, as.gid);
    tlsArgs.push(`--ssl-cert=${join(tlsDir, "cert.pem")}`, `--ssl-key=${join(tlsDir, "key.pem")}`, `--ssl-ca=${join(tlsDir, "ca.pem")}`);
  }

  const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
  const client = (sql: string) =>
    Bun.spawnSync([bins.client, "--no-defaults", "-S", sock, "-u", "root", "-N", "-B", "-e", sql], { cwd: "/", stdout: "pipe", stderr: "pipe", timeout: 30_000 });

  // The port is free when picked but another process may take it before the server binds: retry.
  let port = 0;
  let pid = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const proc = Bun.spawn(
      [bins.server, "--no-defaults", `--datadir=${data}`, ...userArgs, `--port=${port}`, "--bind-address=127.0.0.1", `--socket=${sock}`,
        `--pid-file=${join(dir, "mariadbd.pid")}`, `--log-error=${logFile}`, "--skip-log-bin", "--skip-name-resolve",
        "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M", "--innodb-flush-log-at-trx-commit=0", "--max-connections=200", ...tlsArgs],
      { cwd: "/", stdout: "ignore", stderr: "ignore", stdin: "ignore" },
    );
    pid = proc.pid;
    guard.serving(pid);
    try {
      await waitUntil(() => proc.exitCode !== null || (existsSync(sock) && client("SELECT 1").exitCode === 0), 60_000, () => new Error("timed out"));
    } catch {}
    if (proc.exitCode === null && client("SELECT 1").exitCode === 0) break;
    await killAndWait(pid, "SIGKILL");
    if (attempt >= 5 || !/already in use|bind on TCP\/IP port/i.test(log())) {
      const text = log();
      discard();
      throw new Error(`mariadbd did not start: ${text}`);
    }
  }

  const user = "vigil";
  const database = "vigil_probe";
  // a password with characters that need quoting in a URL and in JSON, so every encoded copy is tested
  const password = `pw-${crypto.randomUUID().slice(0, 8)}/"+%`;
  const quoted = `'${password.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  const setup = [
    `CREATE DATABASE ${database}`,
    `CREATE USER '${user}'@'%' IDENTIFIED BY ${quoted}`,
    `GRANT ALL ON ${database}.* TO '${user}'@'%'`,
    ...(o.tls ? [`CREATE USER 'vigil_tls'@'%' IDENTIFIED BY ${quoted} REQUIRE SSL`, `GRANT ALL ON ${database}.* TO 'vigil_tls'@'%'`] : []),
  ];
  const made = client(setup.join("; "));
  if (made.exitCode !== 0) {
    await killAndWait(pid, "SIGKILL");
    discard();
    throw new Error(`setting up MariaDB failed: ${made.stderr.toString()}`);
  }

  let stopped = false;
  return {
    host: "127.0.0.1",
    port,
    user,
    password,
    database,
    url: `mysql://${user}@127.0.0.1:${port}/${database}`,
    tlsUser: o.tls ? "vigil_tls" : null,
    async admin(sql) {
      const r = client(sql);
      if (r.exitCode !== 0) throw new Error(`mariadb -e ${JSON.stringify(sql)} failed: ${r.stderr.toString()}`);
      return r.stdout.toString();
    },
    log,
    async stop() {
      if (stopped) return;
      stopped = true;
      // nothing in it has to survive: no clean shutdown to wait for
      await killAndWait(pid, "SIGKILL");
      discard();
    },
  };
}
