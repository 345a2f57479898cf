/**
 * Rows of one INSERT gathered and written ROWS_PER_INSERT to a statement, for the module that owns
 * the table (store/checks.ts, store/monitor-events.ts): the statement and its binding per row, not
 * the b-trees, were the cost of folding the ping journal one row a statement, and 32 rows a
 * statement was the fastest count measured (BENCHMARKS.md, heartbeat: "the fold's rows 32 to an
 * INSERT").
 */
import type { Database, Statement } from "bun:sqlite";

export const ROWS_PER_INSERT = 32;

type Bound = string | number | null;

/**
 * One table's rows of four values, written in the order they were added: full statements of
 * ROWS_PER_INSERT rows as they fill, the rest with a statement of their count (prepared once, when
 * first needed) at flush. Only inside a transaction of the caller's on the same connection.
 */
export class MultiRowInsert {
  private params: Bound[] = [];
  private rows = 0;
  private byCount = new Map<number, Statement>();

  constructor(
    private readonly sqlite: Database,
    /** `INSERT INTO table (columns) VALUES` */
    private readonly head: string,
    /** one row's values, with four placeholders */
    private readonly row: string,
  ) {}

  add(a: Bound, b: Bound, c: Bound, d: Bound): void {
    this.params.push(a, b, c, d);
    if (++this.rows === ROWS_PER_INSERT) this.flush();
  }

  flush(): void {
    if (this.rows === 0) return;
    // cleared before the run, so a failed statement (its transaction is rolled back) leaves nothing behind
    const params = this.params;
    const n = this.rows;
    this.discard();
    this.statement(n).run(...params);
  }

  /** Forgets the rows not written yet: the transaction they were meant for is being rolled back. */
  discard(): void {
    this.params = [];
    this.rows = 0;
  }

  private statement(n: number): Statement {
    let s = this.byCount.get(n);
    if (s === undefined) {
      s = this.sqlite.prepare(`${this.head} ${Array.from({ length: n }, () => this.row).join(", ")}`);
      this.byCount.set(n, s);
    }
    return s;
  }
}
