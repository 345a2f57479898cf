/**
 * `npm run build`: compiles Vigil into self-contained executables (README "Install"). schema.sql,
 * the migrations and the docs assets are embedded by their imports, and each executable carries its
 * source map, so a file needs nothing beside it. Into dist/ (or the directory given):
 *
 *   vigil                      for this machine
 *   vigil-linux-x64            Linux on x86-64 with AVX2 (most CPUs since 2013)
 *   vigil-linux-x64-baseline   Linux on x86-64 without AVX2 (older CPUs, many Celeron and Atom boxes)
 *   vigil-linux-arm64          Linux on 64-bit ARM: Raspberry Pi 3/4/5 with a 64-bit OS, ARM servers
 *   SHA256SUMS                 their checksums, in `sha256sum -c` format
 *
 * For a platform other than its own, Bun takes that platform's runtime from the npm package
 * @oven/bun-<platform> of the same Bun version, fetched once into Bun's install cache; the build
 * then works offline. `--only NAME[,NAME]` builds just those files (and their SHA256SUMS).
 *
 * The version comes from package.json; the git commit is the checkout's (`-dirty` when tracked
 * files changed), or VIGIL_BUILD_COMMIT from the environment where there is no checkout (the
 * Dockerfile's build argument).
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gitCommit } from "../src/version.ts";

const root = join(import.meta.dir, "..");
const { values, positionals } = parseArgs({ args: process.argv.slice(2), options: { only: { type: "string" } }, allowPositionals: true });
const outDir = positionals[0] ?? join(root, "dist");

/** file name → Bun compile target; null is this machine's own runtime */
const ALL: Record<string, Bun.Build.CompileTarget | null> = {
  vigil: null,
  "vigil-linux-x64": "bun-linux-x64-modern",
  "vigil-linux-x64-baseline": "bun-linux-x64-baseline",
  "vigil-linux-arm64": "bun-linux-arm64",
};
const names = values.only ? values.only.split(",").map((n) => n.trim()) : Object.keys(ALL);
for (const n of names) {
  if (!(n in ALL)) {
    console.error(`--only: no build named "${n}"; there are ${Object.keys(ALL).join(", ")}`);
    process.exit(2);
  }
}

const commit = process.env.VIGIL_BUILD_COMMIT || gitCommit(root) || "";
mkdirSync(outDir, { recursive: true });
const sums: string[] = [];
for (const name of names) {
  const target = ALL[name]!;
  const started = performance.now();
  // each build in a folder of its own: Bun writes the workers' source maps beside the executable
  // under fixed names, and the maps are embedded in it anyway
  const scratch = mkdtempSync(join(outDir, `.${name}-`));
  try {
    const result = await Bun.build({
      // the worker threads are loaded as modules of their own (src/store/ping-fold-thread.ts,
      // src/store/checkpointer.ts, src/scheduler/maintenance-thread.ts, src/scheduler/pattern-thread.ts)
      entrypoints: [join(root, "src", "main.ts"), join(root, "src", "store", "ping-fold-worker.ts"), join(root, "src", "store", "checkpoint-worker.ts"), join(root, "src", "scheduler", "maintenance-worker.ts"), join(root, "src", "scheduler", "pattern-worker.ts")],
      compile: { outfile: join(scratch, name), ...(target ? { target } : {}) },
      define: { VIGIL_BUILD_COMMIT: JSON.stringify(commit) },
      minify: true,
      sourcemap: "linked",
      target: "bun",
    });
    if (!result.success) {
      for (const log of result.logs) console.error(log);
      console.error(`build of ${name} failed${target ? ` (${target}: Bun fetches its runtime from the npm registry the first time)` : ""}`);
      process.exit(1);
    }
    renameSync(join(scratch, name), join(outDir, name));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const bytes = readFileSync(join(outDir, name));
  sums.push(`${createHash("sha256").update(bytes).digest("hex")}  ${name}`);
  console.log(`built ${join(outDir, name)} (${target ?? "this machine"}, ${(bytes.length / 1048576).toFixed(1)} MiB) in ${Math.round(performance.now() - started)} ms`);
}
writeFileSync(join(outDir, "SHA256SUMS"), sums.join("\n") + "\n");
console.log(`wrote ${join(outDir, "SHA256SUMS")} (vigil ${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version}, commit ${commit || "unknown"})`);
