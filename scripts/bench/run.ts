#!/usr/bin/env bun
/**
 * `npm run bench -- <name> [options]` runs scripts/bench/<name>.ts. A bench module exports
 * `main(args: string[]): Promise<number | void>` (the exit code) and prints its own figures.
 */
import { readdirSync } from "node:fs";

const available = readdirSync(import.meta.dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.endsWith(".d.ts"))
  .map((f) => f.slice(0, -3))
  .sort();

const [name, ...rest] = process.argv.slice(2);
if (!name || name === "--help" || name === "-h" || !available.includes(name)) {
  if (name && name !== "--help" && name !== "-h") console.error(`unknown bench "${name}"`);
  console.error(`usage: npm run bench -- <name> [options]\nbenches: ${available.join(", ") || "(none)"}`);
  process.exit(name === "--help" || name === "-h" ? 0 : 2);
}

const mod = (await import(`./${name}.ts`)) as { main?: (args: string[]) => Promise<number | void> };
if (typeof mod.main !== "function") {
  console.error(`scripts/bench/${name}.ts exports no main(args)`);
  process.exit(2);
}
process.exit((await mod.main(rest)) ?? 0);
