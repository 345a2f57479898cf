import { version } from "../package.json";

/**
 * The build's identity: the version is package.json's, shown by `vigil --version`, in the OpenAPI
 * document and in the checks' User-Agent. A compiled binary also carries the git commit it was
 * built from (scripts/build.ts defines VIGIL_BUILD_COMMIT, empty when the build had no checkout);
 * run from source, the commit is the checkout's, asked of git only when the version is printed.
 */
export const VERSION: string = version;

declare const VIGIL_BUILD_COMMIT: string | undefined;

/** `vigil 0.1.0 (commit 1a2b3c4d5e6f, bun 1.4.5, linux-arm64)`: what a bug report should quote. */
export function versionLine(): string {
  const commit = typeof VIGIL_BUILD_COMMIT === "string" ? VIGIL_BUILD_COMMIT : gitCommit(import.meta.dir);
  return `vigil ${VERSION} (commit ${commit || "unknown"}, bun ${Bun.version}, ${process.platform}-${process.arch})`;
}

/** HEAD of the checkout holding `dir`, with `-dirty` when tracked files differ from it; null outside one or without git. */
export function gitCommit(dir: string): string | null {
  try {
    const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: dir, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    const head = git("rev-parse", "--short=12", "HEAD");
    if (head.exitCode !== 0) return null;
    const changed = git("status", "--porcelain", "--untracked-files=no");
    return head.stdout.toString().trim() + (changed.exitCode === 0 && changed.stdout.toString().trim() ? "-dirty" : "");
  } catch {
    return null; // no git on this machine
  }
}
