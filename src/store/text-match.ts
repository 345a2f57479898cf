import { sql, type RawBuilder } from "kysely";

/**
 * Whether `text` occurs in `column` (an SQL expression), ignoring ASCII case: instr() over both
 * sides lower-cased, so every character of a search is literal (`%`, `_`, `*`, quotes...). Not LIKE:
 * SQLite reads a LIKE pattern only up to its first NUL character, so "ab\0c" would match "xab".
 */
export function containsText(column: RawBuilder<unknown>, text: string): RawBuilder<boolean> {
  return sql<boolean>`instr(lower(${column}), ${text.toLowerCase()}) > 0`;
}

/** A LIKE pattern for values starting with `prefix`, its wildcards escaped (`escape '\'`). */
export function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}
