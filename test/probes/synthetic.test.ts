/** Synthetic scenarios: ordered steps, variables, per-step checks, trace detail and masking. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PROBES, syntheticProbe } from "../../src/probes/index.ts";
import type { SyntheticStep, TraceBodyDetail } from "../../src/domain/monitor.ts";
import type { StepTrace } from "../../src/probes/synthetic.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

const BEARER = "monitor-bearer-secret-42";
const BIG = "B".repeat(3000);
let t: HttpTarget;

beforeAll(async () => {
  t = await startHttpTarget({
    "/login": async (req) => {
      const body = (await req.json()) as { user?: string };
      if (req.headers.get("authorization") !== `Bearer ${BEARER}`) return new Response("no auth", { status: 401 });
      return Response.json({ token: `session-for-${body.user}`, user: { id: 42 } }, { headers: { "x-request-ref": "ref-77" } });
    },
    "/profile/42": (req) =>
      req.headers.get("x-session") === "session-for-ann" && new URL(req.url).searchParams.get("ref") === "ref-77"
        ? new Response(`<html>order number: #9931</html>`)
        : new Response("bad session", { status: 403 }),
    "/orders/9931": () => Response.json({ state: "shipped", echo: `token was ${BEARER}` }),
    "/slow": async () => { await Bun.sleep(300); return new Response("slow"); },
    "/big": () => new Response(BIG),
  });
});
afterAll(() => t.close());

const scenario = (steps: SyntheticStep[], o: Parameters<typeof monitor>[0] = {}) =>
  monitor({ target: t.url, synthetic_enabled: true, synthetic_steps_json: { steps }, api_auth_type: "bearer", api_auth_bearer_token: BEARER, ...o });
const traceOf = (r: { synthetic_trace_json: unknown }) => (r.synthetic_trace_json as { steps: StepTrace[] }).steps;

const happy: SyntheticStep[] = [
  { name: "login", method: "POST", url: `/login`, body: '{"user":"ann"}', expected_http_codes: "200",
    extract: [{ name: "token", from: "json", path: "token" }, { name: "uid", from: "json", path: "user.id" }, { name: "ref", from: "header", path: "X-Request-Ref" }],
    assertions: [{ path: "user.id", op: "equals", value: "42" }] },
  { name: "profile", url: `/profile/{{uid}}?ref={{ref}}`, headers: { "X-Session": "{{token}}" }, extract: [{ name: "order", from: "regex", path: "order number: #(\\d+)" }] },
  { name: "order", url: `/orders/{{order}}`, assertions: [{ path: "state", op: "equals", value: "shipped" }] },
];

describe("synthetic", () => {
  test("an extract pattern RE2 refuses (stored before it did) fails its step with the reason", async () => {
    const r = await PROBES.http(scenario([{ url: "/profile/42", expected_http_codes: "403", extract: [{ name: "order", from: "regex", path: "(?<=#)\\d+" }] }]), context());
    expect(r).toMatchObject({ status: "down", error_code: "synthetic_step_failed" });
    expect(r.error_message).toContain("cannot extract order: regex (?<=#)\\d+ cannot be run (RE2 syntax; no backreferences or lookarounds)");
  });

  test("a scenario passing every step is up and traces each step", async () => {
    const r = await PROBES.http(scenario(happy), context());
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", http_code: 200, resolved_ip: "127.0.0.1" });
    const steps = traceOf(r);
    expect(steps.map((s) => [s.name, s.status, s.error])).toEqual([["login", 200, null], ["profile", 200, null], ["order", 200, null]]);
    expect(steps[0].request).toMatchObject({ method: "POST", url: `${t.url}/login` });
    expect(steps[1].request.url).toBe(`${t.url}/profile/42?ref=ref-77`);
    // an extracted value of credential length is hidden wherever it appears; short ids stay readable
    expect(steps[1].request.headers["X-Session"]).toBe("***");
    expect(steps[0].assertions).toEqual([{ path: "user.id", op: "equals", value: "42", passed: true, actual: "42" }]);
    expect(steps.every((s) => s.latency_ms >= 1 && s.body === undefined)).toBe(true);
  });

  test("monitor auth goes to every step and is masked in the trace and bodies", async () => {
    const r = await syntheticProbe(scenario(happy, { synthetic_trace_body_detail: "full" }), context());
    expect(r.status).toBe("up");
    const steps = traceOf(r);
    expect(steps.every((s) => s.request.headers.Authorization === "***")).toBe(true);
    expect(t.requests.filter((q) => q.path.startsWith("/orders")).at(-1)?.headers.authorization).toBe(`Bearer ${BEARER}`);
    expect(steps[2].body).toContain("token was ***");
    expect(JSON.stringify(r)).not.toContain(BEARER);
  });

  test("an extracted token is hidden everywhere in the trace, the response body it came from included", async () => {
    const r = await syntheticProbe(scenario(happy, { synthetic_trace_body_detail: "full" }), context());
    expect(r.status).toBe("up");
    expect(JSON.stringify(r)).not.toContain("session-for-ann");
    const steps = traceOf(r);
    expect(steps[0].body).toContain('"token":"***"');
    expect(steps[1].request.url).toBe(`${t.url}/profile/42?ref=ref-77`);
  });

  test("the first failing step ends the run, names the step and keeps its code", async () => {
    const steps = [...happy.slice(0, 2), { name: "order", url: "/orders/{{order}}", assertions: [{ path: "state", op: "equals" as const, value: "delivered" }] }, { name: "never", url: "/login" }];
    const r = await syntheticProbe(scenario(steps), context());
    expect(r.status).toBe("down");
    expect(r.error_code).toBe("assertion_failed");
    expect(r.error_message).toBe('step "order" failed: expected state equals "delivered", got shipped');
    const trace = traceOf(r);
    expect(trace.map((s) => s.name)).toEqual(["login", "profile", "order"]);
    expect(trace[2].assertions[0]).toMatchObject({ passed: false, actual: "shipped" });
    expect(trace[2].error).toContain("delivered");
  });

  test("a step with an unexpected status is down with http_error", async () => {
    const r = await syntheticProbe(scenario([{ name: "anonymous login", method: "POST", url: "/login", body: "{}" }], { api_auth_type: "none", api_auth_bearer_token: null }), context());
    expect(r).toMatchObject({ status: "down", error_code: "http_error", http_code: 401 });
    expect(r.error_message).toBe('step "anonymous login" failed: expected status 200-299, got 401');
    const ok = await syntheticProbe(scenario([{ name: "anonymous login", method: "POST", url: "/login", body: "{}", expected_http_codes: "401" }], { api_auth_type: "none", api_auth_bearer_token: null }), context());
    expect(ok.status).toBe("up");
  });

  test("a failed extraction or an undefined variable is synthetic_step_failed", async () => {
    const noVar = await syntheticProbe(scenario([{ name: "login", method: "POST", url: "/login", body: '{"user":"ann"}', extract: [{ name: "x", from: "json", path: "missing.field" }] }]), context());
    expect(noVar).toMatchObject({ status: "down", error_code: "synthetic_step_failed" });
    expect(noVar.error_message).toContain('step "login"');
    expect(noVar.error_message).toContain("missing.field");
    const undef = await syntheticProbe(scenario([{ name: "use", url: "/orders/{{nothing}}" }]), context());
    expect(undef).toMatchObject({ status: "down", error_code: "synthetic_step_failed" });
    expect(undef.error_message).toContain("{{nothing}}");
  });

  test("network failures keep their own code", async () => {
    const r = await syntheticProbe(scenario([{ name: "elsewhere", url: "http://127.0.0.1:1/" }]), context());
    expect(r).toMatchObject({ status: "down", error_code: "connection_refused" });
    expect(r.error_message).toStartWith('step "elsewhere" failed: ');
  });

  test("a slow scenario is degraded by api_max_latency_ms", async () => {
    const r = await syntheticProbe(scenario([{ name: "slow", url: "/slow" }], { api_max_latency_ms: 1 }), context());
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 1 ms`);
  });

  test.each([
    ["none", undefined],
    ["truncated", 1024],
    ["full", 3000],
  ] as [TraceBodyDetail, number | undefined][])("trace body detail %s", async (detail, length) => {
    const r = await syntheticProbe(scenario([{ name: "big", url: "/big" }], { synthetic_trace_body_detail: detail }), context());
    expect(r.status).toBe("up");
    expect(traceOf(r)[0].body?.length).toBe(length as number);
  });

  test("an empty scenario is down", async () => {
    expect(await syntheticProbe(scenario([]), context())).toMatchObject({ status: "down", error_code: "synthetic_step_failed" });
  });
});
