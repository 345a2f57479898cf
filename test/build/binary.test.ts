import { afterAll, expect, test } from "bun:test";
import { copyFileSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT, spawnServer } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// README "Single binary": `npm run build` writes dist/vigil, which needs no node_modules beside it.
test("the compiled binary, alone in an empty folder, serves the API", async () => {
  const buildDir = tempDir("vigil-build-");
  const runDir = tempDir("vigil-run-");
  dirs.push(buildDir, runDir);
  const built = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "build.ts"), join(buildDir, "vigil")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(built.exitCode).toBe(0);
  copyFileSync(join(buildDir, "vigil"), join(runDir, "vigil"));
  Bun.spawnSync(["chmod", "+x", join(runDir, "vigil")]);
  expect(readdirSync(runDir)).toEqual(["vigil"]);

  const server = await spawnServer(["--data", join(runDir, "data")], { exe: [join(runDir, "vigil")], cwd: runDir, env: { PATH: "/usr/bin:/bin" } });
  try {
    const token = readFileSync(join(runDir, "data", "bootstrap-token"), "utf8").trim();
    const spec = await fetch(server.url + "/api/v1/openapi.json");
    expect(spec.status).toBe(200);
    expect((await spec.json()).openapi).toStartWith("3.");
    const docsJs = await fetch(server.url + "/docs/assets/swagger-ui-bundle.js");
    expect(docsJs.status).toBe(200);
    expect((await docsJs.text()).length).toBeGreaterThan(100_000);
    const anon = await fetch(server.url + "/api/v1/monitors");
    expect(anon.status).toBe(401);
    const authed = await fetch(server.url + "/api/v1/nothing", { headers: { authorization: `Bearer ${token}` } });
    expect(authed.headers.get("x-ratelimit-limit")).toBe("300");
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 60_000);
