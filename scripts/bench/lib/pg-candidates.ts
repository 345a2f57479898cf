/**
 * The PostgreSQL clients the pg-clients bench compares, each behind Kysely with the dialect it
 * would use in Vigil, each set up so an `int8` (our epoch-ms and id columns) comes back as a JS
 * number, as the SQLite store returns it:
 *   - `Bun.sql`: Bun's built-in client (`new SQL()`), through kysely-postgres-js (its driver takes
 *     anything with postgres.js's `reserve()`/`unsafe()` shape, Bun's SQL included). Bun returns
 *     `int8` as a string or, with `bigint: true`, a BigInt; there is no number option, so the
 *     rows' BigInts are turned into numbers on the way out.
 *   - `postgres.js`: `postgres` through kysely-postgres-js, `int8` parsed to a number by a custom
 *     type. The dialect sends queries with `sql.unsafe()`, which postgres.js never prepares;
 *     `postgres.js prepared` passes `{ prepare: true }` so the same query reuses a named statement.
 *   - `pg`: node-postgres with Kysely's own PostgresDialect, `int8` parsed to a number with the
 *     pool's `types`, and 'error' listeners on the pool and on each connection. Kysely sends
 *     unnamed statements (parsed on every run).
 */
import { SQL } from "bun";
import { Kysely, PostgresDialect, type Generated } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import { numbersForBigInts } from "../../../src/store/postgres.ts";
// The two clients compared with Bun's are not dependencies of Vigil: the bench's command in
// BENCHMARKS.md installs them with `npm install --no-save`, so they may be absent (and untyped).
// @ts-ignore
import pg from "pg";
// @ts-ignore
import postgres from "postgres";

export interface BenchDb {
  bench_checks: {
    id: Generated<number>;
    monitor_id: number;
    at: number;
    ok: boolean;
    latency_ms: number;
    message: string | null;
  };
}

export interface Candidate {
  name: string;
  dialect: string;
  /** a Kysely over a pool of at most `max` connections; `raw` leaves the client's defaults alone */
  open(url: string, max: number, o?: { raw?: boolean }): Kysely<BenchDb>;
  /** pool-level error events seen (pg's pool emits one when an idle connection dies) */
  poolErrors: string[];
}

/** postgres.js with every query sent as a named prepared statement. */
function postgresPrepared(sql: ReturnType<typeof postgres>) {
  return () => ({
    async reserve() {
      const r = await sql.reserve();
      return {
        release: () => r.release(),
        unsafe: (query: string, params?: never[]) => r.unsafe(query, params, { prepare: true }),
      };
    },
    end: () => sql.end(),
  });
}

const int8AsNumber = { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) };

function postgresJs(url: string, max: number, raw?: boolean) {
  return postgres(url, { max, onnotice: () => {}, ...(raw ? {} : { types: { int8: int8AsNumber } }) });
}

export function candidates(): Candidate[] {
  const pgErrors: string[] = [];
  return [
    {
      name: "Bun.sql",
      dialect: "kysely-postgres-js",
      poolErrors: [],
      open: (url, max, o) => {
        const sql = new SQL({ url, max, bigint: !o?.raw });
        // kysely-postgres-js types its argument as postgres.js's Sql; Bun's SQL has the same two methods it uses.
        return new Kysely<BenchDb>({ dialect: new PostgresJSDialect({ postgres: (o?.raw ? () => sql : numbersForBigInts(sql)) as never }) });
      },
    },
    {
      name: "postgres.js",
      dialect: "kysely-postgres-js",
      poolErrors: [],
      open: (url, max, o) => new Kysely<BenchDb>({ dialect: new PostgresJSDialect({ postgres: postgresJs(url, max, o?.raw) }) }),
    },
    {
      name: "postgres.js prepared",
      dialect: "kysely-postgres-js + prepare: true",
      poolErrors: [],
      open: (url, max, o) => new Kysely<BenchDb>({ dialect: new PostgresJSDialect({ postgres: postgresPrepared(postgresJs(url, max, o?.raw)) as never }) }),
    },
    {
      name: "pg",
      dialect: "Kysely PostgresDialect",
      poolErrors: pgErrors,
      open: (url, max, o) => {
        const pool = new pg.Pool({
          connectionString: url,
          max,
          ...(o?.raw ? {} : { types: { getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as "text"))) as never } }),
        });
        // A connection that dies (server restart) emits 'error': on the pool while idle, on the
        // client while Kysely holds it. Without both listeners that is an uncaught exception.
        const note = (e: Error) => pgErrors.push(`${(e as { code?: string }).code ?? ""} ${e.message}`.trim());
        pool.on("error", note);
        pool.on("connect", (client: { on(event: "error", f: typeof note): void }) => client.on("error", note));
        return new Kysely<BenchDb>({ dialect: new PostgresDialect({ pool }) });
      },
    },
  ];
}
