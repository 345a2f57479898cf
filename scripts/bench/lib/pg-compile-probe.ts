/**
 * Built with `bun build --compile` by the pg-clients bench's checks, then run as
 * `probe <client name> <database url>`: opens that candidate, writes and reads a row in a
 * transaction, prints one JSON line. Shows that the client and its dialect work inside the single
 * executable Vigil ships as, not only from source.
 */
import { sql } from "kysely";
import { candidates } from "./pg-candidates.ts";

const [name, url] = process.argv.slice(2);
const c = candidates().find((x) => x.name === name);
if (!c || !url) {
  console.error("usage: probe <client name> <database url>");
  process.exit(2);
}
const db = c.open(url, 2);
const table = `probe_${Math.random().toString(36).slice(2, 8)}`;
try {
  await sql`CREATE TABLE ${sql.table(table)} (id bigserial PRIMARY KEY, at bigint NOT NULL)`.execute(db);
  const row = await db.transaction().execute(async (trx) => {
    await sql`INSERT INTO ${sql.table(table)} (at) VALUES (${1_764_000_000_000})`.execute(trx);
    return (await sql<{ id: number; at: number }>`SELECT id, at FROM ${sql.table(table)}`.execute(trx)).rows[0];
  });
  console.log(JSON.stringify({ ok: true, row, atType: typeof row?.at }));
} finally {
  await db.destroy();
}
