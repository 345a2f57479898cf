/**
 * `npm run build`: compiles Vigil into one self-contained executable, dist/vigil. schema.sql, the
 * migrations and the docs assets are embedded by their imports, so the file needs nothing beside it.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const outfile = process.argv[2] ?? join(root, "dist", "vigil");
mkdirSync(join(outfile, ".."), { recursive: true });
const started = performance.now();
const result = await Bun.build({
  // the worker threads are loaded as modules of their own (src/heartbeat/fold-thread.ts,
  // src/store/checkpointer.ts)
  entrypoints: [join(root, "src", "main.ts"), join(root, "src", "heartbeat", "fold-worker.ts"), join(root, "src", "store", "checkpoint-worker.ts")],
  compile: { outfile },
  minify: true,
  sourcemap: "linked",
  target: "bun",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const size = Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1048576).toFixed(1)} MiB) in ${Math.round(performance.now() - started)} ms`);
