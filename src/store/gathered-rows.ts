/**
 * Rows gathered during one PostgreSQL transaction, one array per column, and written by
 * writeGathered: each table's rows as one statement over its arrays
 * (`INSERT ... SELECT * FROM unnest($1::bigint[], $2::text[], ...)`), and the statements of
 * several tables as one, through data-modifying WITH clauses. A statement's text depends only on
 * which tables have rows, never on how many, so it is prepared once per connection, and a batch of
 * pings costs one round trip where a statement per row would cost one per ping. A column that most
 * rows leave null is kept short: unnest pads a shorter array with nulls, so its trailing nulls are
 * neither built nor encoded (the driver quoting every element of every array was the largest cost
 * of a flush in the heartbeat bench's profile). The PostgreSQL
 * counterpart of multi-row-insert.ts, for the modules that own the tables (store/checks.ts,
 * store/monitor-events.ts, the ping path's bookkeeping in store/ping-store-postgres.ts).
 */
import { CompiledQuery } from "kysely";
import type { Db } from "./database.ts";

export type Value = string | number | null;

export class GatheredRows {
  /** one array per column, in the order of the statement's arrays; rows in the order added */
  columns: Value[][];
  /** rows added */
  rows = 0;

  /**
   * `statement(first)`: the INSERT or UPDATE, its parameters numbered from $first: the `fixed`
   * values (the same for every row), then one array per column.
   */
  constructor(
    readonly width: number,
    private readonly statement: (first: number) => string,
    private readonly fixed: readonly Value[] = [],
  ) {
    this.columns = this.fresh();
  }

  /**
   * Column `i` to push the row being added onto, when not every row sets it: padded with nulls
   * first, up to that row. A column every row sets is pushed onto directly.
   */
  sparse(i: number): Value[] {
    const column = this.columns[i]!;
    while (column.length < this.rows) column.push(null);
    return column;
  }

  /** Counts the row whose values were just pushed. */
  added(): void {
    this.rows++;
  }

  get empty(): boolean {
    return this.rows === 0;
  }

  /** this table's statement from parameter $first, and its parameters; the rows are forgotten here */
  take(first: number): { sql: string; params: unknown[] } {
    const params = [...this.fixed, ...this.columns];
    this.columns = this.fresh();
    this.rows = 0;
    return { sql: this.statement(first), params };
  }

  private fresh(): Value[][] {
    const columns: Value[][] = [];
    for (let i = 0; i < this.width; i++) columns.push([]);
    return columns;
  }
}

/**
 * Writes the rows gathered in `tables` as one statement on `trx` (the write queue's transaction).
 * Each table gets one statement of its own, so the rows of a table keep the order they were added
 * in; the order between tables does not matter, since no row written here reads another.
 */
export async function writeGathered(trx: Db, tables: readonly GatheredRows[]): Promise<void> {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const t of tables) {
    if (t.empty) continue;
    const part = t.take(params.length + 1);
    parts.push(part.sql);
    params.push(...part.params);
  }
  if (parts.length === 0) return;
  const sql = parts.length === 1 ? parts[0]! : `WITH ${parts.map((p, i) => `w${i} AS (${p})`).join(", ")} SELECT 1`;
  await trx.executeQuery(CompiledQuery.raw(sql, params));
}

/** A statement builder whose texts are built once per first parameter number. */
export function statementFrom(build: (first: number) => string): (first: number) => string {
  const texts = new Map<number, string>();
  return (first) => {
    let text = texts.get(first);
    if (text === undefined) texts.set(first, (text = build(first)));
    return text;
  };
}

/** `$first::type[], $first+1::type[], ...` for these PostgreSQL types. */
export function arrayParams(first: number, types: readonly string[]): string {
  return types.map((t, i) => `$${first + i}::${t}[]`).join(", ");
}
