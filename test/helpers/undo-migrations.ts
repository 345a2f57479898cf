import { sql, type Kysely } from "kysely";

/**
 * Takes a database back to before `migrations` (the later ones first): what they created and added
 * is dropped and what they renamed gets its old name, so that a test can open it as an older
 * version and watch those migrations run on data of its own. Data they moved is not moved back.
 */
export async function undoMigrations(db: Kysely<any>, migrations: readonly { sql: string }[], engine: "sqlite" | "postgres"): Promise<void> {
  for (const m of [...migrations].reverse()) {
    // indexes first: SQLite drops no column an index still names
    for (const [, name] of m.sql.matchAll(/CREATE (?:UNIQUE )?INDEX (?:IF NOT EXISTS )?(\w+)/g)) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
    for (const [, table, column] of m.sql.matchAll(/ALTER TABLE (\w+) ADD COLUMN (\w+)/g)) await sql.raw(`ALTER TABLE ${table} DROP COLUMN ${engine === "postgres" ? "IF EXISTS " : ""}${column}`).execute(db);
    for (const [, name] of [...m.sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g)].reverse()) await sql.raw(`DROP TABLE IF EXISTS ${name}${engine === "postgres" ? " CASCADE" : ""}`).execute(db);
    for (const [, table, kind, from, to] of [...m.sql.matchAll(/ALTER TABLE (\w+) RENAME (COLUMN|CONSTRAINT) (\w+) TO (\w+)/g)].reverse()) {
      await sql.raw(`ALTER TABLE ${table} RENAME ${kind} ${to} TO ${from}`).execute(db);
    }
  }
}
