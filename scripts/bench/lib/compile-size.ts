/**
 * What a candidate library adds to the single binary: each entry built alone with
 * `bun build --compile --minify`, beside an empty program built the same way (the benches that pick
 * a library by measurement: grpc-clients, yaml-libs).
 */
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./proc.ts";

export type Compiled = { name: string; exe: string; bytes: number; overEmpty: number } | { name: string; error: string };

/** Builds the empty program, then each `[name, entry]`, into `dir`; the empty program comes first. */
export function compileEach(dir: string, entries: [string, string][]): Compiled[] {
  writeFileSync(join(dir, "empty.ts"), "console.log(JSON.stringify({ ok: true }));\n");
  const out: Compiled[] = [];
  let base = 0;
  for (const [name, entry] of [["empty program", join(dir, "empty.ts")] as [string, string], ...entries]) {
    const exe = join(dir, name.replace(/\W+/g, "-"));
    const build = Bun.spawnSync([process.execPath, "build", "--compile", "--minify", entry, "--outfile", exe], { cwd: ROOT, stdout: "pipe", stderr: "pipe", timeout: 180_000 });
    if (build.exitCode !== 0) {
      out.push({ name, error: `build FAILED: ${build.stderr.toString().slice(0, 300)}` });
      continue;
    }
    const bytes = statSync(exe).size;
    if (out.length === 0) base = bytes;
    out.push({ name, exe, bytes, overEmpty: bytes - base });
  }
  return out;
}
