/**
 * PostgreSQL probe (README "PostgreSQL"): a login with db_password and db_query (default SELECT 1)
 * through Bun's built-in SQL client, on a connection of its own that is closed after the check.
 * The session is opened with statement_timeout set to what is left of timeout_ms, so the server
 * ends a slow query by itself even if nothing reaches it; when the check gives up first it also
 * sends PostgreSQL's cancel request.
 */
import type { CheckErrorCode } from "../domain/check-result.ts";
import { sqlProbe, type SqlClientError, type SqlFlavour } from "./sql-check.ts";

const POSTGRES: SqlFlavour = {
  adapter: "postgres",
  product: "PostgreSQL",
  schemes: ["postgres", "postgresql"],
  defaultPort: 5432,
  example: "postgres://user@host:5432/database",
  // libpq's defaults: the database named like the user
  defaults: (user, database) => ({ user: user || "postgres", database: database || user || "postgres" }),
  options: (budgetMs) => ({ prepare: false, connection: { application_name: "vigil", statement_timeout: budgetMs } }),
  async start(client, text) {
    const query = client.unsafe(text).simple().execute();
    return {
      done: query,
      async end() {
        try {
          query.cancel();
        } catch {}
      },
    };
  },
  serverErrorCode(err: SqlClientError, loggedIn: boolean): CheckErrorCode {
    const state = typeof err.errno === "string" ? err.errno : "";
    // class 28: invalid authorization (a wrong password, an unknown user, a pg_hba.conf rule)
    if (state.startsWith("28")) return "db_auth_failed";
    if (state === "57014" && /statement timeout/i.test(err.message ?? "")) return "connection_timeout";
    if (!state) return "db_error";
    return loggedIn ? "db_query_failed" : "db_error";
  },
};

export const postgresProbe = sqlProbe(POSTGRES);
