/**
 * README "Install": `npm run build` (scripts/build.ts) writes an executable for this machine and one
 * per release platform, with SHA256SUMS. The build runs once, here, into a temp folder; every other
 * check of the binaries belongs in this file so the suite compiles only once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { closeSync, copyFileSync, cpSync, existsSync, openSync, readdirSync, readFileSync, readSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { gitCommit } from "../../src/version.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { ROOT, spawnServer } from "../helpers/process.ts";
import { tempDir, waitFor } from "../helpers/server.ts";

const RELEASES = { "vigil-linux-x64": "x64", "vigil-linux-x64-baseline": "x64", "vigil-linux-arm64": "arm64" } as const;
const QEMU = Bun.which("qemu-aarch64-static") ?? Bun.which("qemu-aarch64");
const ARM64_LIBC = "/usr/aarch64-linux-gnu";
const canRunArm64 = process.arch === "arm64" || (QEMU !== null && existsSync(join(ARM64_LIBC, "lib", "ld-linux-aarch64.so.1")));
if (!canRunArm64) console.error("\n!!! running vigil-linux-arm64 SKIPPED: needs qemu-user-static and libc6-arm64-cross (apt-get install qemu-user-static libc6-arm64-cross, as .ci/run does) !!!\n");
const WORKER_THREADS = ["vigil-fold", "vigil-checkpnt", "vigil-maint"];
const hasAvx2 = process.arch === "x64" && /\bavx2\b/.test(readFileSync("/proc/cpuinfo", "utf8"));

const dirs: string[] = [];
let dist = "";
let buildOutput = "";
const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
const commit = gitCommit(ROOT) ?? "unknown";

beforeAll(() => {
  dist = tempDir("vigil-build-");
  dirs.push(dist);
  const built = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "build.ts"), dist], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  buildOutput = built.stdout.toString() + built.stderr.toString();
  if (built.exitCode !== 0) throw new Error(`build failed: ${buildOutput}`);
}, 180_000);
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** e_machine of an ELF executable: 62 is x86-64, 183 is AArch64 */
function elfMachine(file: string): { magic: string; bits: number; machine: number } {
  const head = Buffer.alloc(20);
  const fd = openSync(file, "r");
  try {
    readSync(fd, head, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  return { magic: head.subarray(0, 4).toString("latin1"), bits: head[4] === 2 ? 64 : 32, machine: head.readUInt16LE(18) };
}

const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin" } });
  return { code: r.exitCode, out: r.stdout.toString().trim(), err: r.stderr.toString() };
};

test("the build writes one executable per platform and SHA256SUMS that sha256sum -c accepts", () => {
  expect(readdirSync(dist).sort()).toEqual(["SHA256SUMS", "vigil", ...Object.keys(RELEASES)].sort());
  const sums = readFileSync(join(dist, "SHA256SUMS"), "utf8");
  expect(sums.trim().split("\n").map((l) => l.split("  ")[1]).sort()).toEqual(["vigil", ...Object.keys(RELEASES)].sort());
  const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: dist, stdout: "pipe", stderr: "pipe" });
  expect(check.stdout.toString().trim().split("\n").sort()).toEqual(["vigil: OK", ...Object.keys(RELEASES).map((n) => `${n}: OK`)].sort());
  expect(check.exitCode).toBe(0);
  for (const [name, arch] of Object.entries(RELEASES)) {
    expect({ name, ...elfMachine(join(dist, name)) }).toEqual({ name, magic: "\x7fELF", bits: 64, machine: arch === "x64" ? 62 : 183 });
  }
  expect(buildOutput).toContain(`commit ${commit}`);
});

test("--version of the built binary names the version, the commit it was built from and its platform", () => {
  const expected = (platform: string) => `vigil ${version} (commit ${commit}, bun ${Bun.version}, ${platform})`;
  expect(run([join(dist, "vigil"), "--version"])).toEqual({ code: 0, out: expected(`${process.platform}-${process.arch}`), err: "" });
  if (process.arch === "x64") {
    expect(run([join(dist, "vigil-linux-x64-baseline"), "-v"]).out).toBe(expected("linux-x64"));
    if (hasAvx2) expect(run([join(dist, "vigil-linux-x64"), "-v"]).out).toBe(expected("linux-x64"));
  }
});

test.skipIf(!canRunArm64)("vigil-linux-arm64 runs on arm64 (under qemu-user here)", () => {
  const exe = join(dist, "vigil-linux-arm64");
  const r = run(process.arch === "arm64" ? [exe, "--version"] : [QEMU!, "-L", ARM64_LIBC, exe, "--version"]);
  expect(r).toEqual({ code: 0, out: `vigil ${version} (commit ${commit}, bun ${Bun.version}, linux-arm64)`, err: "" });
}, 60_000);

// The binary needs no node_modules beside it; its own `healthcheck` answers for it (the Dockerfile's HEALTHCHECK).
test("the compiled binary, alone in an empty folder, serves the API and checks its own health", async () => {
  const runDir = tempDir("vigil-run-");
  dirs.push(runDir);
  copyFileSync(join(dist, "vigil"), join(runDir, "vigil"));
  Bun.spawnSync(["chmod", "+x", join(runDir, "vigil")]);
  expect(readdirSync(runDir)).toEqual(["vigil"]);

  const server = await spawnServer(["--data", join(runDir, "data")], { exe: [join(runDir, "vigil")], cwd: runDir, env: { PATH: "/usr/bin:/bin" } });
  try {
    const token = readFileSync(join(runDir, "data", "bootstrap-token"), "utf8").trim();
    const spec = await fetch(server.url + "/api/v1/openapi.json");
    expect(spec.status).toBe(200);
    const doc = await spec.json();
    expect(doc.openapi).toStartWith("3.");
    expect(doc.info.version).toBe(version);
    const docsJs = await fetch(server.url + "/docs/assets/swagger-ui-bundle.js");
    expect(docsJs.status).toBe(200);
    expect((await docsJs.text()).length).toBeGreaterThan(100_000);
    const anon = await fetch(server.url + "/api/v1/monitors");
    expect(anon.status).toBe(401);
    const authed = await fetch(server.url + "/api/v1/nothing", { headers: { authorization: `Bearer ${token}` } });
    expect(authed.headers.get("x-ratelimit-limit")).toBe("300");

    // the worker threads load from inside the binary (its own module paths, lib/worker-thread.ts
    // workerModule): a module missing there would only be logged, with its work back on the serving
    // thread. They exist on SQLite only; on PostgreSQL the server starts none of them.
    if (TEST_ENGINE === "sqlite" && existsSync("/proc/self/task")) {
      const threads = () => readdirSync(`/proc/${server.proc.pid}/task`).map((tid) => readFileSync(`/proc/${server.proc.pid}/task/${tid}/comm`, "utf8").trim());
      await waitFor(() => WORKER_THREADS.every((n) => threads().includes(n)));
      expect(threads()).toEqual(expect.arrayContaining(WORKER_THREADS));
    }
    // a check's patterns run on their worker (scheduler/pattern-thread.ts), started with the first,
    // on either engine: a regex rule on the binary's own OpenAPI document is judged up
    const created = await fetch(server.url + "/api/v1/monitors", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "spec", monitor_type: "http", target: `${server.url}/api/v1/openapi.json`, interval_sec: 60, timeout_ms: 5000, api_json_assertions_json: [{ path: "openapi", op: "regex", value: "^3\\.\\d+" }] }),
    });
    expect(created.status).toBe(201);
    const checks = `${server.url}/api/v1/monitors/${(await created.json()).data.id}/checks`;
    const check = await waitFor(async () => (await (await fetch(checks, { headers: { authorization: `Bearer ${token}` } })).json()).data[0]?.attributes, { timeoutMs: 20_000 });
    expect(check).toMatchObject({ status: "up", error_message: null });
    expect(server.output()).not.toContain("did not start");

    const health = Bun.spawnSync([join(runDir, "vigil"), "healthcheck"], { cwd: runDir, env: { PATH: "/usr/bin:/bin", VIGIL_PORT: String(server.port) }, stdout: "pipe", stderr: "pipe" });
    expect({ code: health.exitCode, out: health.stdout.toString().trim() }).toEqual({ code: 0, out: `healthy: http://127.0.0.1:${server.port}/readyz answered 200 (ready)` });
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 60_000);

// The Dockerfile builds from what .dockerignore lets into the context, without .git: that must be
// enough to compile, and the commit then comes from the VIGIL_COMMIT build argument.
test("the Docker build context alone compiles, taking the commit from the environment", () => {
  const lines = readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  // this reads the one form the file uses: exclude everything, then let named paths back in
  expect(lines[0]).toBe("*");
  const context = tempDir("vigil-context-");
  dirs.push(context);
  for (const line of lines.slice(1)) {
    expect(line).toStartWith("!");
    cpSync(join(ROOT, line.slice(1)), join(context, line.slice(1)), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(context, "node_modules"));
  const out = join(context, "out");
  const built = Bun.spawnSync([process.execPath, join(context, "scripts", "build.ts"), "--only", "vigil", out], { cwd: context, env: { ...process.env, VIGIL_BUILD_COMMIT: "0123456789ab" }, stdout: "pipe", stderr: "pipe" });
  expect({ code: built.exitCode, err: built.stderr.toString() }).toEqual({ code: 0, err: "" });
  expect(readdirSync(out).sort()).toEqual(["SHA256SUMS", "vigil"]);
  expect(run([join(out, "vigil"), "--version"]).out).toBe(`vigil ${version} (commit 0123456789ab, bun ${Bun.version}, ${process.platform}-${process.arch})`);
}, 60_000);
