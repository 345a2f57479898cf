/**
 * Write-only secrets are bound to the origins they were given for (README, Security): a token that
 * may write monitors cannot move a stored credential to a server of its own, nor have a synthetic
 * scenario read it back from a target that echoes requests and carry it elsewhere in pieces.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkOnce, createMonitor } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

const TOKEN = "s3cr3t-bearer-token-4f9a7c";
const PASS = "hunter2-basic-password";

let s: TestServer;
let origin: HttpTarget; // where the secrets were given for; echoes the request it got
let other: HttpTarget; // a server of the attacker's

const echo = (req: Request) => Response.json({ headers: Object.fromEntries(req.headers), next: "127.0.0.1" });

/** The Authorization header in a JSON string written with every character escaped (\u0042...). */
const echoEscaped = (req: Request) => {
  const escaped = [...(req.headers.get("authorization") ?? "")].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  return new Response(`{"authorization":"${escaped}"}`, { headers: { "content-type": "application/json" } });
};

/** The Authorization header as text, in two writes that part in the middle of the token. */
const echoSplit = (req: Request) => {
  const line = `Authorization: ${req.headers.get("authorization") ?? ""}\n`;
  const cut = line.indexOf("Bearer ") + "Bearer ".length + 8;
  const bytes = new TextEncoder();
  return new Response(
    new ReadableStream({
      async start(c) {
        c.enqueue(bytes.encode(line.slice(0, cut)));
        await Bun.sleep(100);
        c.enqueue(bytes.encode(line.slice(cut)));
        c.close();
      },
    }),
  );
};

beforeAll(async () => {
  origin = await startHttpTarget({ "/echo": echo, "/health": () => new Response("ok"), "/echo-escaped": echoEscaped, "/echo-split": echoSplit });
  other = await startHttpTarget({ "/collect": () => new Response("thanks"), "/echo": echo });
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([origin?.close(), other?.close()]);
});

const bearer = (over: Record<string, unknown> = {}) => ({
  name: "api",
  monitor_type: "http",
  target: `${origin.url}/health`,
  interval_sec: 60,
  timeout_ms: 3000,
  is_paused: true,
  api_auth_type: "bearer",
  api_auth_bearer_token: TOKEN,
  ...over,
});

const create = async (attrs: Record<string, unknown>) => String(await createMonitor(s, attrs));
const firstCheck = (id: string) => checkOnce(s, id);

const sawSecret = (t: HttpTarget, secret: string) => t.requests.some((r) => JSON.stringify(r).includes(secret) || JSON.stringify(r).includes(secret.slice(0, 6)));

describe("moving a monitor to another origin", () => {
  test("without sending the secret again is a 422 naming it; with it, the new origin gets the new secret", async () => {
    const id = await create(bearer());
    for (const change of [{ target: `${other.url}/collect` }, { target: origin.url.replace("127.0.0.1", "localhost") + "/health" }, { port: other.port }, { target: origin.url.replace("http:", "https:") + "/health" }]) {
      const r = await s.api("PATCH", `/api/v1/monitors/${id}`, change);
      expect({ change, status: r.status }).toEqual({ change, status: 422 });
      expect(r.json.error.details.api_auth_bearer_token.join(" ")).toContain("must be sent again");
      expect(r.text).not.toContain(TOKEN);
    }
    // the same origin: another path is fine
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { target: `${origin.url}/echo` })).status).toBe(200);
    // re-sent (or cleared) with the move: accepted, and only the new secret goes there
    const moved = await s.api("PATCH", `/api/v1/monitors/${id}`, { target: `${other.url}/collect`, api_auth_bearer_token: "a-new-token-for-the-new-place" });
    expect(moved.status).toBe(200);
    await firstCheck(id);
    expect(sawSecret(other, TOKEN)).toBe(false);
    expect(other.requests.at(-1)!.headers.authorization).toBe("Bearer a-new-token-for-the-new-place");
  });

  test("basic and api_key secrets are bound too; clearing the secret also allows the move", async () => {
    const basic = await create(bearer({ api_auth_type: "basic", api_auth_basic_user: "ann", api_auth_basic_pass: PASS, api_auth_bearer_token: undefined }));
    const r = await s.api("PATCH", `/api/v1/monitors/${basic}`, { target: `${other.url}/collect` });
    expect(r.status).toBe(422);
    expect(Object.keys(r.json.error.details)).toEqual(["api_auth_basic_pass"]);
    expect((await s.api("PATCH", `/api/v1/monitors/${basic}`, { target: `${other.url}/collect`, api_auth_type: "none" })).status).toBe(200);

    const key = await create(bearer({ api_auth_type: "api_key", api_auth_api_key_header: "X-Key", api_auth_api_key_value: "key-value-123456", api_auth_bearer_token: undefined }));
    const k = await s.api("PATCH", `/api/v1/monitors/${key}`, { port: other.port });
    expect(k.status).toBe(422);
    expect(k.json.error.details.api_auth_api_key_value).toBeDefined();
  });

  test("a synthetic step at a new literal origin needs the secret again; steps at the bound origin do not", async () => {
    const id = await create(bearer());
    const steps = (url: string) => ({ synthetic_enabled: true, synthetic_steps_json: { steps: [{ url: "/health" }, { url }] } });
    const away = await s.api("PATCH", `/api/v1/monitors/${id}`, steps(`${other.url}/collect`));
    expect(away.status).toBe(422);
    expect(away.json.error.details.api_auth_bearer_token.join(" ")).toContain(other.url);
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, steps(`${origin.url}/echo`))).status).toBe(200);
  });
});

describe("at check time", () => {
  test("a step whose host a variable decides gets no credentials when it lands on another origin", async () => {
    const seen = other.requests.length;
    const id = await create(
      bearer({
        synthetic_enabled: true,
        synthetic_steps_json: {
          steps: [
            { url: "/echo", extract: [{ name: "h", from: "json", path: "next" }] },
            { url: `http://{{h}}:${other.port}/collect` },
          ],
        },
      }),
    );
    const check = await firstCheck(id);
    expect(check.status).toBe("up");
    const got = other.requests.slice(seen);
    expect(got.map((r) => r.path)).toEqual(["/collect"]);
    expect(got[0]!.headers.authorization).toBeUndefined();
    // the bound origin still got it
    expect(origin.requests.some((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  test("extraction reads the response with the secret masked, so an echoed credential cannot leave in pieces", async () => {
    const seen = other.requests.length;
    const id = await create(
      bearer({
        synthetic_enabled: true,
        synthetic_trace_body_detail: "full",
        synthetic_steps_json: {
          steps: [
            { url: "/echo", extract: [{ name: "piece", from: "regex", path: "Bearer (\\w{6})" }] },
            { url: `http://127.0.0.1:${other.port}/collect?piece={{piece}}` },
          ],
        },
      }),
    );
    // the second step names another origin, so the write needed the secret: it was sent with it
    const check = await firstCheck(id);
    expect(check.status).toBe("down");
    expect(check.error_code).toBe("synthetic_step_failed");
    expect(check.error_message).toContain("cannot extract piece");
    expect(JSON.stringify(check)).not.toContain(TOKEN.slice(0, 6));
    expect(other.requests.length).toBe(seen);
  });
});

describe("a check judges the answer with the secrets masked", () => {
  // an echoing path on the secret's own origin: if a rule saw the token, "up" or "down" would tell
  // whether a guess of its first characters is right, one character at a time
  const guesses = [TOKEN.slice(0, 4), `${TOKEN.slice(0, 3)}X`];
  const judged = async (over: Record<string, unknown>) => {
    const check = await firstCheck(await create(bearer(over)));
    expect(JSON.stringify(check)).not.toContain(TOKEN.slice(0, 6));
    return check;
  };

  test("keyword, body text and JSON rules cannot tell a right guess from a wrong one", async () => {
    for (const guess of guesses) {
      expect(await judged({ target: `${origin.url}/echo`, keyword: `Bearer ${guess}` })).toMatchObject({ status: "down", error_code: "keyword_missing" });
      expect(await judged({ target: `${origin.url}/echo`, api_expected_body_contains: `"Bearer ${guess}` })).toMatchObject({ status: "down", error_code: "body_mismatch" });
      expect(await judged({ target: `${origin.url}/echo`, api_json_assertions_json: [{ path: "headers.authorization", op: "regex", value: `^Bearer ${guess}` }] })).toMatchObject({ status: "down", error_code: "assertion_failed" });
      expect(await judged({ target: `${origin.url}/echo`, api_json_assertions_json: [{ path: "headers.authorization", op: "contains", value: `Bearer ${guess}` }] })).toMatchObject({ status: "down", error_code: "assertion_failed" });
    }
  });

  test("what the mask reads can be asserted: the secret went where *** is", async () => {
    expect(await judged({ target: `${origin.url}/echo`, keyword: "Bearer ***", api_json_assertions_json: [{ path: "headers.authorization", op: "regex", value: "^Bearer \\*{3}$" }] })).toMatchObject({ status: "up" });
  });

  test("nor can an escaped echo, a read cut short, or a synthetic step", async () => {
    for (const guess of guesses) {
      // parsing decodes \u escapes the text's masking did not know
      expect(await judged({ target: `${origin.url}/echo-escaped`, api_json_assertions_json: [{ path: "authorization", op: "regex", value: `^Bearer ${guess}` }] })).toMatchObject({ status: "down" });
      // the keyword is in the first write: the read goes on past it until the token can be masked whole
      expect(await judged({ target: `${origin.url}/echo-split`, keyword: `Bearer ${TOKEN.slice(0, 3)}${guess.slice(3)}` })).toMatchObject({ status: "down", error_code: "keyword_missing" });
      const synthetic = await judged({ synthetic_enabled: true, synthetic_steps_json: { steps: [{ url: "/echo", assertions: [{ path: "headers.authorization", op: "regex", value: `^Bearer ${guess}` }] }] } });
      expect(synthetic).toMatchObject({ status: "down", error_code: "assertion_failed" });
    }
    expect(await judged({ target: `${origin.url}/echo-split`, keyword: "Bearer ***" })).toMatchObject({ status: "up" });
  });
});
