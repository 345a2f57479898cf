/**
 * `vigil healthcheck` (README "Install", Docker): the Dockerfile's HEALTHCHECK and supervisors run
 * it where no curl is at hand. It finds the local server from the same --port/--host (or VIGIL_PORT/
 * VIGIL_HOST) as `vigil serve`, exits 0 when /readyz (or /healthz with --live) answers 2xx, and 1
 * with the reason when the server is not ready, does not answer, or answers too slowly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freePort, runVigil } from "../helpers/process.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

let s: TestServer;
let target: HttpTarget;
let release: () => void = () => {};
const stalled = new Promise<Response>((resolve) => (release = () => resolve(new Response("late"))));

beforeAll(async () => {
  s = await startTestServer();
  target = await startHttpTarget({
    "/readyz": () => Response.json({ status: "not_ready", problems: ["store not writable: disk full"], cluster: {} }, { status: 503 }),
    "/slow": () => stalled,
    "/moved": () => new Response(null, { status: 302, headers: { location: "/elsewhere" } }),
  });
});
afterAll(async () => {
  release();
  await s?.stop();
  await target?.close();
});

describe("vigil healthcheck", () => {
  test("a ready server: exit 0, found through VIGIL_PORT and the default host 0.0.0.0 (asked on 127.0.0.1)", async () => {
    const r = await runVigil(["healthcheck"], { VIGIL_PORT: String(s.port), VIGIL_HOST: "0.0.0.0" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`healthy: http://127.0.0.1:${s.port}/readyz answered 200 (ready)`);
  });

  test("--port and --host flags win over the environment; --live asks /healthz", async () => {
    const r = await runVigil(["healthcheck", "--port", String(s.port), "--host", "127.0.0.1", "--live"], { VIGIL_PORT: "1" });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`healthy: http://127.0.0.1:${s.port}/healthz answered 200 (ok)`);
  });

  test("a server that is not ready: exit 1 with its problems", async () => {
    const r = await runVigil(["healthcheck", "--url", `${target.url}/readyz`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`unhealthy: ${target.url}/readyz answered 503 (not_ready): store not writable: disk full`);
  });

  test("a redirect is not health: exit 1", async () => {
    const r = await runVigil(["healthcheck", "--url", `${target.url}/moved`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 302");
  });

  test("nothing listening: exit 1, says there was no answer", async () => {
    const port = await freePort();
    const r = await runVigil(["healthcheck", "--port", String(port)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`unhealthy: no answer from http://127.0.0.1:${port}/readyz`);
  });

  test("an answer slower than --timeout: exit 1", async () => {
    const r = await runVigil(["healthcheck", "--url", `${target.url}/slow`, "--timeout", "0.3"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`unhealthy: no answer from ${target.url}/slow: none within 0.3 s`);
  });

  test.each([
    [["--port", "0"], "--port must be an integer from 1 to 65535"],
    [["--port", "http"], "--port must be an integer from 1 to 65535"],
    [["--timeout", "never"], "--timeout must be a number of seconds"],
  ])("%p is a usage error (exit 2)", async (args, message) => {
    const r = await runVigil(["healthcheck", ...(args as string[])]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message as string);
  });

  test("--help", async () => {
    const r = await runVigil(["healthcheck", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage");
  });
});
