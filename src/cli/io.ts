import { parseArgs } from "node:util";
import { databaseUrl, type Env } from "../config/load.ts";
import type { Store } from "../store/database.ts";
import { openStoreAt } from "../store/open-store.ts";

/** Where a command writes, and what it reads from the environment: tests pass their own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: Env;
}

export const processIo: CliIo = {
  out: (l) => process.stdout.write(l + "\n"),
  err: (l) => process.stderr.write(l + "\n"),
  env: process.env,
};

/** A usage problem: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {}

type Spec = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

/** parseArgs with strict checking and readable errors; every command accepts --data, --database-url and --help. */
export function parseCommand<S extends Spec>(args: string[], spec: S, positionals = 0) {
  try {
    const r = parseArgs({ args, options: { data: { type: "string" }, "database-url": { type: "string" }, help: { type: "boolean", short: "h" }, ...spec }, strict: true, allowPositionals: true });
    if (r.positionals.length > positionals) throw new UsageError(`unexpected argument "${r.positionals[positionals]}"`);
    return r as { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError((e as Error).message.replace(/\. To specify.*$/s, ""));
  }
}

export function dataDirOf(values: Record<string, unknown>, env: Env): string {
  return (values.data as string | undefined) ?? env.VIGIL_DATA ?? "./data";
}

/** --database-url, else VIGIL_DATABASE_URL: the PostgreSQL database a command works on, or null for SQLite under --data. */
export function databaseUrlOf(values: Record<string, unknown>, env: Env): string | null {
  try {
    return databaseUrl((values["database-url"] as string | undefined) ?? env.VIGIL_DATABASE_URL ?? null);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** The store a command works on: PostgreSQL with --database-url (or VIGIL_DATABASE_URL), else SQLite under --data. */
export async function openCommandStore(values: Record<string, unknown>, env: Env): Promise<Store> {
  return openStoreAt({ dataDir: dataDirOf(values, env), databaseUrl: databaseUrlOf(values, env) });
}

/** Prints rows as aligned columns, for `list` commands. */
export function table(io: CliIo, header: string[], rows: (string | number | null)[][]): void {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null ? "-" : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  for (const r of cells) io.out(r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
}
