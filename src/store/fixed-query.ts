import type { Compilable, CompiledQuery, QueryResult } from "kysely";
import type { Db } from "./database.ts";
import { engineOf } from "./engine-of.ts";

/** Stands for one named value while a query is built; each use in the query is one parameter. */
class Slot {
  constructor(readonly name: string) {}
}

interface Shape<R> {
  query: CompiledQuery<R>;
  /** per parameter, the name of the value it takes, or undefined for a constant of the query */
  names: (string | undefined)[];
}

/**
 * A query whose shape never changes, built and compiled once per engine; each run binds its own
 * values into the compiled SQL. For the statements every check result runs: building and compiling
 * them through Kysely each time took about a fifth of the serving thread (BENCHMARKS.md, "Scheduler
 * with an hour of history").
 *
 * `build` gets the query builder and stand-ins for the values: it must pass each value into the
 * query as it is (a `where`, `values` or `set` value), never compute with it, and never choose the
 * shape by it; a value that does not end up as a parameter is refused at the first compile. A
 * query whose shape depends on a value (null or not, say) is one fixedQuery per shape.
 */
export function fixedQuery<P extends Record<string, unknown>, R>(build: (db: Db, values: P) => Compilable<R>): (db: Db, values: P) => Promise<QueryResult<R>> {
  const shapes: Partial<Record<"sqlite" | "postgres", Shape<R>>> = {};
  const shapeFor = (db: Db): Shape<R> => {
    const engine = engineOf(db);
    return (shapes[engine] ??= compileShape(db, build));
  };
  return (db, values) => {
    const { query, names } = shapeFor(db);
    const parameters = names.map((name, i) => (name === undefined ? query.parameters[i] : values[name]));
    return db.executeQuery<R>({ ...query, parameters });
  };
}

function compileShape<P extends Record<string, unknown>, R>(db: Db, build: (db: Db, values: P) => Compilable<R>): Shape<R> {
  let handedOut = 0;
  const standIns = new Proxy({} as P, {
    get(_, name) {
      if (typeof name !== "string") return undefined;
      handedOut++;
      return new Slot(name);
    },
  });
  const query = build(db, standIns).compile();
  const names = query.parameters.map((p) => (p instanceof Slot ? p.name : undefined));
  const bound = names.filter((n) => n !== undefined).length;
  if (bound !== handedOut) {
    throw new Error(`fixedQuery: ${handedOut - bound} of the values read while building were not passed into the query as parameters: ${query.sql}`);
  }
  return { query, names };
}

/** The first row of a fixed query, or undefined. */
export async function firstRow<R>(result: Promise<QueryResult<R>>): Promise<R | undefined> {
  return (await result).rows[0];
}

/** How many rows a fixed insert, update or delete changed. */
export async function changedRows(result: Promise<QueryResult<unknown>>): Promise<number> {
  return Number((await result).numAffectedRows ?? 0n);
}
