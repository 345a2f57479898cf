/**
 * A small filesystem for disk-full tests: a 16 MiB tmpfs (needs root / CAP_SYS_ADMIN), else an
 * ext4 loop file, else null, and the caller skips with a loud message. `fill()` writes a filler file
 * until ENOSPC; `free()` deletes it.
 */
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/server.ts";

export interface SmallDisk {
  dir: string;
  kind: "tmpfs" | "loop";
  /** writes a filler file until the filesystem refuses more; returns the bytes written */
  fill(): number;
  free(): void;
  unmount(): void;
}

function run(cmd: string[]): boolean {
  const r = Bun.spawnSync(cmd, { stdout: "ignore", stderr: "pipe" });
  return r.exitCode === 0;
}

export function mountSmallDisk(sizeMiB = 16): SmallDisk | null {
  const base = tempDir("vigil-small-disk-");
  const dir = join(base, "mnt");
  mkdirSync(dir);
  let kind: SmallDisk["kind"] | null = null;
  if (run(["mount", "-t", "tmpfs", "-o", `size=${sizeMiB}m`, "tmpfs", dir])) kind = "tmpfs";
  else {
    const image = join(base, "disk.img");
    if (run(["truncate", "-s", `${sizeMiB}M`, image]) && run(["mkfs.ext4", "-q", "-F", image]) && run(["mount", "-o", "loop", image, dir])) kind = "loop";
  }
  if (!kind) {
    rmSync(base, { recursive: true, force: true });
    return null;
  }
  const filler = join(dir, "filler");
  return {
    dir,
    kind,
    fill() {
      const fd = openSync(filler, "a");
      let written = 0;
      try {
        // big chunks first, then single bytes, so not even a page is left over
        for (const size of [1 << 20, 4096, 1]) {
          const chunk = Buffer.alloc(size, 0x55);
          for (let i = 0; i < 1_000_000; i++) {
            try {
              written += writeSync(fd, chunk);
            } catch (e) {
              if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      run(["umount", "-l", dir]);
      rmSync(base, { recursive: true, force: true });
    },
  };
}
