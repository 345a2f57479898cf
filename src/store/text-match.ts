import { sql, type RawBuilder } from "kysely";
import type { Db } from "./database.ts";
import { engineOf } from "./engine-of.ts";

/**
 * Lower-cases A-Z only, as SQLite's lower() does, so both sides of a search fold alike on either
 * engine (docs/api-rules.md "Query parameters": other letters match as written).
 */
export function foldAscii(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";

/**
 * Whether `text` occurs in `column` (an SQL expression), ASCII letters in any case, every other
 * character literal (`%`, `_`, `*`, quotes...). Not LIKE on SQLite: it reads a pattern only up to
 * its first NUL. On PostgreSQL, whose lower() and ILIKE fold by the database's locale, the exact
 * test is translate() of A-Z; an ILIKE beside it lets the pg_trgm indexes narrow the rows (it
 * folds at least A-Z under every locale but the Turkic ones, whose I folds to a dotless ı). A text holding a NUL is never searched for: no
 * stored text holds one (docs/api-rules.md "Text").
 */
export function containsText(db: Db, column: RawBuilder<unknown>, text: string): RawBuilder<boolean> {
  const folded = foldAscii(text);
  if (engineOf(db) === "sqlite") return sql<boolean>`instr(lower(${column}), ${folded}) > 0`;
  return sql<boolean>`(${column} ilike ${"%" + escapeLike(folded) + "%"} escape '\\' and strpos(translate(${column}, ${UPPER}, ${LOWER}), ${folded}) > 0)`;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => "\\" + c);
}

/**
 * A text column for ORDER BY, in code point order on both engines: SQLite compares text as bytes
 * (BINARY), PostgreSQL by the database's collation unless told "C" (en_US, say, passes over hyphens
 * and case at first), so a list ordered by name would come out in another order there.
 */
export function inCodePointOrder(db: Db, column: string): RawBuilder<string> {
  return engineOf(db) === "sqlite" ? sql<string>`${sql.ref(column)}` : sql<string>`${sql.ref(column)} collate "C"`;
}

/** A LIKE pattern for values starting with `prefix`, its wildcards escaped (`escape '\'`). */
export function likePrefix(prefix: string): string {
  return escapeLike(prefix) + "%";
}
