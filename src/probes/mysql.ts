/**
 * MySQL and MariaDB probe (README "MySQL and MariaDB"): a login with db_password and db_query
 * (default SELECT 1) through Bun's built-in SQL client, on a connection of its own that is closed
 * after the check. Neither server notices a closed connection while a query runs, so before a
 * db_query the probe asks for its session's id, and if the check gives up on the query it ends
 * that session from a second connection (KILL, which a user may do to its own sessions).
 */
import type { CheckErrorCode } from "../domain/check-result.ts";
import { sqlProbe, type SqlClientError, type SqlFlavour } from "./sql-check.ts";

/** Access denied (to the server, to the database, from this host), account locked, password expired. */
const AUTH_ERRNOS = new Set([1044, 1045, 1130, 1698, 1862, 3118, 4151]);
/** The server's own statement time limits (MariaDB max_statement_time, MySQL max_execution_time). */
const TIME_LIMIT_ERRNOS = new Set([1969, 3024]);
/** How long the second connection may take to end a query the check gave up on. */
const KILL_WAIT_MS = 5000;

const MYSQL: SqlFlavour = {
  // Bun's "mariadb" adapter is its MySQL driver; unlike "mysql" it selects no database when the URL names none
  adapter: "mariadb",
  product: "MySQL",
  schemes: ["mysql", "mariadb"],
  defaultPort: 3306,
  example: "mysql://user@host:3306/database",
  defaults: (user, database) => ({ user: user || "root", database: database || undefined }),
  options: () => ({}),
  async start(client, text, custom, twin) {
    // SELECT 1 cannot be slow on a server that answers, so only a db_query pays the round trip
    const id = custom ? Number((await client.unsafe("SELECT CONNECTION_ID() AS id"))[0]?.id) : null;
    const query = client.unsafe(text).simple().execute();
    return {
      done: query,
      async end() {
        if (id === null || !Number.isInteger(id)) return;
        const killer = twin();
        const timer = setTimeout(() => void killer.close({ timeout: 0 }).catch(() => {}), KILL_WAIT_MS);
        try {
          await killer.unsafe(`KILL ${id}`);
        } catch {
          // the session may have ended by itself meanwhile
        } finally {
          clearTimeout(timer);
          await killer.close({ timeout: 0 }).catch(() => {});
        }
      },
    };
  },
  serverErrorCode(err: SqlClientError, loggedIn: boolean, tlsAsked: boolean): CheckErrorCode {
    if (typeof err.errno !== "number") {
      // the client's word for a login that ended before the server said why: with TLS asked,
      // most likely a server that does not offer it
      if (err.code === "ERR_MYSQL_AUTHENTICATION_FAILED") return tlsAsked ? "tls_error" : "db_auth_failed";
      return "db_error";
    }
    if (AUTH_ERRNOS.has(err.errno)) return "db_auth_failed";
    if (TIME_LIMIT_ERRNOS.has(err.errno)) return "connection_timeout";
    return loggedIn ? "db_query_failed" : "db_error";
  },
};

export const mysqlProbe = sqlProbe(MYSQL);
