/**
 * A PostgreSQL for the postgres probe's tests: a cluster of its own from test/helpers/postgres.ts
 * (never the one the PostgreSQL suite stores Vigil's data in), with a user and password checked by
 * SCRAM (pg_hba.conf: scram-sha-256 on 127.0.0.1 for everyone but the trusted superuser that
 * `admin()` uses), a database owned by that user, and optionally TLS with the given certificate
 * (then also a user that may only log in over TLS).
 *
 *   const pg = await startPostgresServer({ tls: certs });  // throws, naming the package, without the binaries
 *   probe(monitor({ target: pg.url, db_password: pg.password }))
 *   await pg.admin("SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'vigil'");
 *   await pg.stop();
 */
import { SQL } from "bun";
import { chmodSync, chownSync, copyFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "./daemon.ts";
import { startPostgres } from "./postgres.ts";

export const POSTGRES_MISSING =
  "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: install Debian's `postgresql` package (apt-get install -y postgresql)";

export interface PostgresProbeServer {
  host: string;
  port: number;
  /** the user with a password, and its database: `postgres://vigil@127.0.0.1:<port>/vigil_probe` */
  user: string;
  password: string;
  database: string;
  url: string;
  /** a user that may only log in over TLS (pg_hba `hostnossl … reject`), when started with `tls`; same password */
  tlsUser: string | null;
  /** Runs SQL as the superuser (trusted, no password); the rows. */
  admin<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  /** PEM files of the server certificate and its key; TLS is then offered on the same port */
  tls?: { certPath: string; keyPath: string };
}

export async function startPostgresServer(o: PostgresServerOptions = {}): Promise<PostgresProbeServer> {
  const pg = await startPostgres();
  if (!pg) throw new Error(POSTGRES_MISSING);
  const adminSql = new SQL({ url: pg.url(), max: 1 });
  try {
    const data = join(pg.dir, "data");
    const owner = statSync(data);
    const user = "vigil";
    const database = "vigil_probe";
    // a password with characters that need quoting in a URL and in JSON, so every encoded copy is tested
    const password = `pw-${crypto.randomUUID().slice(0, 8)}/"+%`;
    const literal = `'${password.replaceAll("'", "''")}'`;
    await adminSql.unsafe(`CREATE ROLE ${user} LOGIN PASSWORD ${literal}`);
    await adminSql.unsafe(`CREATE DATABASE ${database} OWNER ${user}`);
    if (o.tls) await adminSql.unsafe(`CREATE ROLE vigil_tls LOGIN PASSWORD ${literal}`);

    writeFileSync(
      join(data, "pg_hba.conf"),
      [
        "local all all trust",
        `host all ${pg.user} 127.0.0.1/32 trust`,
        "hostnossl all vigil_tls 127.0.0.1/32 reject",
        "host all all 127.0.0.1/32 scram-sha-256",
      ].join("\n") + "\n",
    );
    if (o.tls) {
      for (const [from, name] of [[o.tls.certPath, "server.crt"], [o.tls.keyPath, "server.key"]] as const) {
        const to = join(data, name);
        copyFileSync(from, to);
        chownSync(to, owner.uid, owner.gid);
        // PostgreSQL refuses a key that others can read
        chmodSync(to, 0o600);
      }
      await adminSql.unsafe("ALTER SYSTEM SET ssl = on");
      await adminSql.unsafe("ALTER SYSTEM SET ssl_cert_file = 'server.crt'");
      await adminSql.unsafe("ALTER SYSTEM SET ssl_key_file = 'server.key'");
    }
    await adminSql.unsafe("SELECT pg_reload_conf()");
    // the postmaster rereads its files asynchronously: wait until a fresh session sees them
    const reloaded = async () => {
      const fresh = new SQL({ url: pg.url(), max: 1 });
      try {
        const [row] = await fresh.unsafe("SELECT current_setting('ssl') AS ssl, (SELECT count(*)::int FROM pg_hba_file_rules WHERE 'vigil_tls' = ANY(user_name)) AS tls_rules");
        return (!o.tls || row.ssl === "on") && row.tls_rules === 1;
      } finally {
        await fresh.close({ timeout: 0 });
      }
    };
    await waitUntil(reloaded, 30_000, () => new Error("PostgreSQL did not take the new pg_hba.conf and TLS settings in time"));
    // pg_hba_file_rules reads the file, not what the postmaster loaded: wait until a wrong password is refused
    const refusesWrongPassword = async () => {
      const probe = new SQL({ hostname: "127.0.0.1", port: pg.port, username: user, password: "not-the-password", database, max: 1, connectionTimeout: 5 });
      try {
        await probe.unsafe("SELECT 1");
        return false;
      } catch {
        return true;
      } finally {
        await probe.close({ timeout: 0 });
      }
    };
    await waitUntil(refusesWrongPassword, 30_000, () => new Error("PostgreSQL still accepts a wrong password after the pg_hba.conf reload"));

    return {
      host: "127.0.0.1",
      port: pg.port,
      user,
      password,
      database,
      url: `postgres://${user}@127.0.0.1:${pg.port}/${database}`,
      tlsUser: o.tls ? "vigil_tls" : null,
      async admin<T>(sql: string) {
        return (await adminSql.unsafe(sql)) as T[];
      },
      async stop() {
        await adminSql.close({ timeout: 0 });
        await pg.stop();
      },
    };
  } catch (err) {
    await adminSql.close({ timeout: 0 });
    await pg.stop();
    throw err;
  }
}
