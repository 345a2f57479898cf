/**
 * What the postgres and mysql probes share (README "PostgreSQL" and "MySQL and MariaDB"): one
 * connection with Bun's SQL client (no pool kept between checks) to the judged address of the
 * target URL's host, as the URL's user to its database, with the password of db_password and TLS
 * when db_tls; then db_query (default SELECT 1) as a simple query, and the connection closed. A
 * query still running at timeout_ms is also ended on the server, the way each server allows, so a
 * slow check leaves no work behind. Messages quote the server's words with the password masked.
 */
import { SQL } from "bun";
import { emptyResult, failed, type CheckErrorCode, type CheckResult } from "../domain/check-result.ts";
import { latencyReason } from "../domain/cert-expiry.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { elapsedMs, raceDeadline, startDeadline } from "../net/deadline.ts";
import { certErrorCode, certFailure } from "../net/net-errors.ts";
import { resolveHost } from "../net/resolve-host.ts";
import { endpointOf, parseDbTarget } from "./db-target.ts";
import { sqlTlsOptions, type SeenCertificate } from "./db-tls.ts";
import { maskText, secretsOf } from "./request-auth.ts";
import type { Probe } from "./types.ts";

export type SqlOptions = Bun.SQL.PostgresOrMySQLOptions;

/** An error of Bun's SQL client: its own code, and the server's (SQLSTATE or errno) when the server sent one. */
export interface SqlClientError {
  code?: string;
  errno?: string | number;
  message?: string;
}

export interface RunningQuery {
  /** settles with the query */
  done: Promise<unknown>;
  /** ends the query on the server, once the check has given up on it; never rejects */
  end(): Promise<void>;
}

export interface SqlFlavour {
  adapter: "postgres" | "mariadb";
  /** the server's name in messages */
  product: string;
  schemes: readonly string[];
  defaultPort: number;
  /** the target's shape, for the message about a target that is not one */
  example: string;
  /** the user and database when the URL names none */
  defaults(user: string, database: string): { user: string; database: string | undefined };
  /** client options for a check that has `budgetMs` left */
  options(budgetMs: number): Partial<SqlOptions>;
  /** starts `text` on `client` (`custom`: db_query, not the default); `twin` opens another connection like it */
  start(client: SQL, text: string, custom: boolean, twin: () => SQL): Promise<RunningQuery>;
  /** the error code of an error that is neither a network nor a TLS one */
  serverErrorCode(err: SqlClientError, loggedIn: boolean, tlsAsked: boolean): CheckErrorCode;
}

interface Attempt {
  endpoint: string;
  host: string;
  user: string;
  loggedIn: boolean;
  tlsAsked: boolean;
}

function toFailure(err: unknown, flavour: SqlFlavour, a: Attempt): ProbeFailure {
  if (err instanceof ProbeFailure) return err;
  const e = (err ?? {}) as SqlClientError;
  const code = e.code ?? "";
  const words = e.message || String(err);
  if (certErrorCode(code)) return certFailure(code, a.endpoint, a.host);
  if (code.endsWith("_CONNECTION_REFUSED") || code === "ECONNREFUSED") return new ProbeFailure("connection_refused", `connection refused by ${a.endpoint}`);
  if (code.endsWith("_CONNECTION_TIMEOUT")) return new ProbeFailure("connection_timeout", `timed out connecting to ${a.endpoint} (${words})`);
  if (e.errno === undefined && /TLS|SSL/.test(code)) return new ProbeFailure("tls_error", `TLS with ${a.endpoint} failed: ${words} (${code})`);
  const said = `${words} (${e.errno ?? (code || "error")})`;
  const dbCode = flavour.serverErrorCode(e, a.loggedIn, a.tlsAsked);
  switch (dbCode) {
    case "db_auth_failed":
      return new ProbeFailure(dbCode, `${flavour.product} at ${a.endpoint} refused the login of ${JSON.stringify(a.user)}: ${said}`);
    case "db_query_failed":
      return new ProbeFailure(dbCode, `the query failed on ${a.endpoint}: ${said}`);
    case "connection_timeout":
      return new ProbeFailure(dbCode, `the query on ${a.endpoint} ran out of time: ${said}`);
    case "tls_error":
      return new ProbeFailure(dbCode, `TLS with ${a.endpoint} failed (does the server offer TLS?): ${said}`);
    default:
      return new ProbeFailure(dbCode, `${flavour.product} at ${a.endpoint}: ${said}`);
  }
}

export function sqlProbe(flavour: SqlFlavour): Probe {
  return async (m, ctx) => {
    const checkedAt = ctx.now();
    const deadline = startDeadline(m.timeout_ms, ctx.signal);
    const blockPrivate = ctx.blockPrivateTargets === true || m.block_private_targets;
    const observed: Partial<CheckResult> = {};
    const seen: SeenCertificate = { notAfter: null };
    let secrets = secretsOf(m);
    const attempt: Attempt = { endpoint: m.target ?? "", host: "", user: "", loggedIn: false, tlsAsked: m.db_tls };
    let client: SQL | null = null;
    let starting: Promise<RunningQuery> | null = null;
    let running: RunningQuery | null = null;
    let settled = false;
    try {
      const t = parseDbTarget(m.target, flavour.schemes, flavour.defaultPort, flavour.example);
      if (t.urlPassword) secrets = secretsOf(m, [t.urlPassword]);
      const { user, database } = flavour.defaults(t.user, t.database);
      Object.assign(attempt, { endpoint: endpointOf(t.host, t.port), host: t.host, user });
      const begun = performance.now();
      const target = await resolveHost(t.host, deadline, blockPrivate);
      observed.resolved_ip = target.ip;
      const started = performance.now();
      const options: SqlOptions = {
        adapter: flavour.adapter,
        hostname: target.ip,
        port: t.port,
        username: user,
        // a function, so an empty password stays empty: given "" the client would read PGPASSWORD or MYSQL_PASSWORD
        password: () => m.db_password ?? "",
        database,
        max: 1,
        idleTimeout: 0,
        connectionTimeout: Math.ceil(m.timeout_ms / 1000) + 1,
        tls: m.db_tls ? sqlTlsOptions(target.host, m.tls_verify !== false, ctx.extraCa, seen) : false,
        ...flavour.options(Math.max(1, m.timeout_ms - Math.round(started - begun))),
      };
      client = new SQL({ ...options, onconnect: () => (attempt.loggedIn = true) });
      const step = () => (attempt.loggedIn ? `waiting for the query's answer from ${attempt.endpoint}` : `connecting to ${attempt.endpoint}`);
      starting = flavour.start(client, m.db_query ?? "SELECT 1", m.db_query !== null, () => new SQL(options));
      running = await raceDeadline(starting, deadline, step);
      running.done.then(() => (settled = true), () => (settled = true));
      await raceDeadline(running.done, deadline, step);
      const latency = elapsedMs(started);
      const slow = latencyReason(latency, m.api_max_latency_ms);
      return { ...emptyResult(checkedAt), ...observed, latency_ms: latency, ssl_not_after: seen.notAfter, status: slow ? "degraded" : "up", degraded_reason: slow };
    } catch (err) {
      const f = toFailure(err, flavour, attempt);
      return failed(checkedAt, f.code, maskText(f.message, secrets), { ...observed, ssl_not_after: seen.notAfter, ...f.extra });
    } finally {
      deadline.dispose();
      if (running && !settled) void running.end();
      // given up on while the query was being started: end it should the start still succeed
      else if (!running) starting?.then((r) => r.end(), () => {});
      // closing cuts the socket at once; what still runs on the server is end()'s to stop
      if (client) await client.close({ timeout: 0 }).catch(() => {});
    }
  };
}
