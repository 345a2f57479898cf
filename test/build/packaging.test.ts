/**
 * README "Install": the Dockerfile and the compose files, checked by the real tools
 * where this machine has them (each skipped loudly when absent; .ci/run installs them):
 * - Dockerfile: `dockerfile-utils lint` (the Docker language server's validator: instructions, flags,
 *   durations, ports) and `dockerlinter` (best-practice rules, and shellcheck on every RUN);
 * - compose.yaml and compose.postgres.yaml: `docker-compose config` validates them against the schema.
 * The settings the README promises are read from the files themselves. None of this builds the binary
 * (test/build/binary.test.ts does, once).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const tool = (name: string, install: string) => {
  const path = Bun.which(name);
  if (!path) console.error(`\n!!! ${name} SKIPPED: it is not installed (${install}, as .ci/run does) !!!\n`);
  return path;
};
const DOCKERFILE_UTILS = tool("dockerfile-utils", "npm install -g dockerfile-utils");
const DOCKERLINTER = tool("dockerlinter", "npm install -g --ignore-scripts dockerlinter");
const SHELLCHECK = tool("shellcheck", "apt-get install shellcheck");
const COMPOSE = tool("docker-compose", "apt-get install docker-compose");

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const scratch = () => {
  const d = tempDir("vigil-pkg-");
  dirs.push(d);
  return d;
};
const run = (cmd: string[], o: { cwd?: string; env?: Record<string, string> } = {}) => {
  const r = Bun.spawnSync(cmd, { cwd: o.cwd ?? ROOT, env: { ...process.env, ...o.env }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: (r.stdout.toString() + r.stderr.toString()).trim() };
};

const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
/** the Dockerfile's instructions, continuation lines joined, comments dropped */
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"))
  .map((l) => ({ op: l.split(/\s+/, 1)[0]!.toUpperCase(), args: l.slice(l.split(/\s+/, 1)[0]!.length).trim() }));
const finalStage = instructions.slice(instructions.findLastIndex((i) => i.op === "FROM"));

describe("Dockerfile", () => {
  test.skipIf(!DOCKERFILE_UTILS)("dockerfile-utils lint finds nothing", () => {
    expect(run([DOCKERFILE_UTILS!, "lint", join(ROOT, "Dockerfile")])).toEqual({ code: 0, out: "" });
  });

  test.skipIf(!DOCKERLINTER)("dockerlinter finds nothing, shellcheck on every RUN included", () => {
    // it writes each RUN into a script file in its working directory
    const cwd = scratch();
    const r = run([DOCKERLINTER!, "-f", join(ROOT, "Dockerfile"), "-e", ...(SHELLCHECK ? [] : ["-s", "none"])], { cwd });
    expect(r).toEqual({ code: 0, out: "" });
  });

  test("the image runs as a non-root user, keeps its data in the /data volume and checks its own health", () => {
    const last = (op: string) => finalStage.filter((i) => i.op === op).at(-1)?.args;
    expect(instructions.filter((i) => i.op === "FROM").length).toBe(2);
    expect(last("USER")).not.toMatch(/^(root|0)(:|$)/);
    expect(last("USER")).toBeTruthy();
    expect(JSON.parse(last("VOLUME")!)).toEqual(["/data"]);
    const env = Object.fromEntries([...(last("ENV") ?? "").matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    expect(env).toMatchObject({ VIGIL_DATA: "/data", VIGIL_PORT: "8080" });
    expect(last("EXPOSE")).toBe(env.VIGIL_PORT);
    expect(last("HEALTHCHECK")).toMatch(/CMD \["\/usr\/local\/bin\/vigil", "healthcheck"\]$/);
    expect(JSON.parse(last("ENTRYPOINT")!)).toEqual(["/usr/local/bin/vigil"]);
    expect(JSON.parse(last("CMD")!)).toEqual(["serve", "--data", "/data"]);
    // the build stage compiles with the Bun that npm installs from the lockfile
    expect(instructions.find((i) => i.op === "RUN" && i.args.includes("scripts/build.ts"))?.args).toContain("node_modules/.bin/bun scripts/build.ts");
  });
});

describe("compose files", () => {
  test.skipIf(!COMPOSE)("docker-compose config accepts compose.yaml, alone and with compose.postgres.yaml", () => {
    const alone = run([COMPOSE!, "-f", "compose.yaml", "config"]);
    expect(alone.code).toBe(0);
    expect(alone.out).toContain("vigil-data:/data");
    const pg = run([COMPOSE!, "-f", "compose.yaml", "-f", "compose.postgres.yaml", "config"], { env: { VIGIL_DB_PASSWORD: "s3cret" } });
    expect(pg.code).toBe(0);
    expect(pg.out).toContain("VIGIL_DATABASE_URL: postgres://vigil:s3cret@postgres:5432/vigil");
    expect(pg.out).toContain("condition: service_healthy");
  });

  test.skipIf(!COMPOSE)("without VIGIL_DB_PASSWORD the PostgreSQL variant refuses to start, naming it", () => {
    const env = { ...process.env };
    delete env.VIGIL_DB_PASSWORD;
    const r = Bun.spawnSync([COMPOSE!, "-f", "compose.yaml", "-f", "compose.postgres.yaml", "config"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.toString()).toContain("set VIGIL_DB_PASSWORD");
  });
});
