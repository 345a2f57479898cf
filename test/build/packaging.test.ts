/**
 * README "Install": the Dockerfile, the compose files and the systemd unit, checked by the real tools
 * where this machine has them (each skipped loudly when absent; .ci/run installs them):
 * - Dockerfile: `dockerfile-utils lint` (the Docker language server's validator: instructions, flags,
 *   durations, ports) and `dockerlinter` (best-practice rules, and shellcheck on every RUN);
 * - compose.yaml and compose.postgres.yaml: `docker-compose config` validates them against the schema;
 * - packaging/vigil.service: `systemd-analyze verify` finds nothing to say, and
 *   `systemd-analyze security` keeps its exposure score.
 * The settings the README promises are read from the files themselves. None of this builds the binary
 * (test/build/binary.test.ts does, once).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const tool = (name: string, install: string, missed = "SKIPPED") => {
  const path = Bun.which(name);
  if (!path) console.error(`\n!!! ${name} ${missed}: it is not installed (${install}, as .ci/run does) !!!\n`);
  return path;
};
const DOCKERFILE_UTILS = tool("dockerfile-utils", "npm install -g dockerfile-utils");
const DOCKERLINTER = tool("dockerlinter", "npm install -g --ignore-scripts dockerlinter");
const SHELLCHECK = tool("shellcheck", "apt-get install shellcheck", "NOT RUN on the Dockerfile's RUN lines");
const COMPOSE = tool("docker-compose", "apt-get install docker-compose");
const SYSTEMD_ANALYZE = tool("systemd-analyze", "apt-get install systemd");

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

describe("systemd unit", () => {
  const unit = readFileSync(join(ROOT, "packaging", "vigil.service"), "utf8");
  const settings = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, "gm"))].map((m) => m[1]!);

  /** an alternate root holding the system's units, the unit and an executable at its ExecStart path */
  function unitRoot(): string {
    const root = scratch();
    const units = ["/usr/lib/systemd/system", "/lib/systemd/system"].find((d) => existsSync(join(d, "sysinit.target")))!;
    cpSync(units, join(root, "usr/lib/systemd/system"), { recursive: true, dereference: false });
    mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
    writeFileSync(join(root, "etc/systemd/system/vigil.service"), unit);
    mkdirSync(join(root, "usr/local/bin"), { recursive: true });
    // verify only needs ExecStart's file to exist and be executable
    writeFileSync(join(root, "usr/local/bin/vigil"), "#!/bin/sh\n");
    chmodSync(join(root, "usr/local/bin/vigil"), 0o755);
    return root;
  }

  test.skipIf(!SYSTEMD_ANALYZE)("systemd-analyze verify has nothing to say", () => {
    expect(run([SYSTEMD_ANALYZE!, "verify", `--root=${unitRoot()}`, "vigil.service"])).toEqual({ code: 0, out: "" });
  });

  test.skipIf(!SYSTEMD_ANALYZE)("systemd-analyze security rates the unit's exposure 2.0 or lower (docs/install.md: 1.3)", () => {
    const r = run([SYSTEMD_ANALYZE!, "security", "--offline=true", `--root=${unitRoot()}`, "vigil.service"]);
    expect(r.code).toBe(0);
    const score = Number(/Overall exposure level for vigil\.service: ([\d.]+)/.exec(r.out)?.[1]);
    expect(score).toBeLessThanOrEqual(2.0);
  });

  test("the unit runs vigil serve on the state directory as the vigil user, with no capability and the JIT left alone", () => {
    expect(settings("ExecStart")).toEqual(["/usr/local/bin/vigil serve --data /var/lib/vigil"]);
    expect(settings("StateDirectory")).toEqual(["vigil"]);
    expect(settings("User")).toEqual(["vigil"]);
    expect(settings("EnvironmentFile")).toEqual(["-/etc/vigil/vigil.env"]);
    expect(settings("Restart")).toEqual(["on-failure"]);
    expect(settings("CapabilityBoundingSet")).toEqual([""]);
    expect(settings("AmbientCapabilities")).toEqual([""]);
    for (const key of ["NoNewPrivileges", "ProtectHome", "PrivateTmp"]) expect(settings(key)).toEqual(["yes"]);
    expect(settings("ProtectSystem")).toEqual(["strict"]);
    expect(settings("SystemCallFilter")).toContain("@system-service");
    // Bun's JIT needs memory that is writable and executable: denied it, the engine falls back to its interpreter
    expect(settings("MemoryDenyWriteExecute")).toEqual([]);
    // every VIGIL_* name in the example environment file is a real setting
    const known = readFileSync(join(ROOT, "src", "config", "options.ts"), "utf8");
    const names = [...readFileSync(join(ROOT, "packaging", "vigil.env"), "utf8").matchAll(/^#?(VIGIL_\w+)=/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(3);
    for (const n of names) expect({ n, known: known.includes(`env: "${n}"`) }).toEqual({ n, known: true });
  });
});
