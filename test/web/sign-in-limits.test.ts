/**
 * Wrong passwords are limited per (user name, client address) and per client address, an IPv6
 * address by its /64; only failures count, and no address's failures refuse the right password from
 * another (README "Security", Limits). Behind a trusted proxy on loopback, X-Forwarded-For names the
 * client, so one test plays many.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, PASSWORD, WebClient } from "./helpers.ts";

/** --guess-limit, lower than the default 10 so that few slow password hashes run */
const LIMIT = 3;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(["--trusted-proxy", "127.0.0.1", "--guess-limit", String(LIMIT)]);
  for (const u of ["bob", "alice", "carol", "dave"]) await addUser(s, u);
});
afterAll(() => s?.stop());

/** One sign-in from `ip`, as a fresh browser there would send it; the status it got. */
async function signIn(ip: string, username: string, password: string): Promise<number> {
  const c = new WebClient(s.url);
  const headers = { "x-forwarded-for": ip };
  await c.get("/login", headers);
  const r = await c.post("/login", { username, password, next: "/" }, { headers });
  return r.res.status;
}

describe("sign-in limits", () => {
  test("the limit's worth of wrong passwords for bob from one address: that address is refused for bob; bob signs in from another, alice from the same", async () => {
    for (let i = 0; i < LIMIT; i++) expect(await signIn("203.0.113.10", "bob", `wrong password ${i}`)).toBe(401);
    expect(await signIn("203.0.113.10", "bob", "wrong again")).toBe(429);
    // the address that guessed is refused even the right password, until its 5 minutes are over
    expect(await signIn("203.0.113.10", "bob", PASSWORD)).toBe(429);
    expect(await signIn("203.0.113.11", "bob", PASSWORD)).toBe(303);
    expect(await signIn("203.0.113.10", "alice", PASSWORD)).toBe(303);
    expect(s.logs.some((l) => l.msg === "sign-in rate limited" && l.by === "user name")).toBe(true);
  });

  test("signing in never counts: eleven right passwords (past the limit, and past the old rule's ten of any kind), then one wrong less than the limit, and the right one still works", async () => {
    for (let i = 0; i < 11; i++) expect(await signIn("203.0.113.20", "alice", PASSWORD)).toBe(303);
    for (let i = 0; i < LIMIT - 1; i++) expect(await signIn("203.0.113.20", "alice", `wrong password ${i}`)).toBe(401);
    expect(await signIn("203.0.113.20", "alice", PASSWORD)).toBe(303);
  });

  test("an IPv6 client is limited by its /64: another address of it is refused, another /64 is not", async () => {
    for (let i = 0; i < LIMIT; i++) expect(await signIn(`2001:db8:1:2::${i + 1}`, "carol", `wrong password ${i}`)).toBe(401);
    expect(await signIn("2001:db8:1:2:ffff::99", "carol", PASSWORD)).toBe(429);
    expect(await signIn("2001:db8:1:3::1", "carol", PASSWORD)).toBe(303);
  });

  test("guesses sent at once are all counted: the hash's time is no way around the limit", async () => {
    const statuses = await Promise.all(Array.from({ length: LIMIT + 2 }, (_, i) => signIn("198.51.100.40", "bob", `wrong password ${i}`)));
    expect(statuses.filter((x) => x === 401)).toHaveLength(LIMIT);
    expect(statuses.filter((x) => x === 429)).toHaveLength(2);
  });

  test("one address guessing over many user names is refused after three times the limit, for every user name", async () => {
    for (let i = 0; i < 3 * LIMIT; i++) expect(await signIn("198.51.100.30", `nobody${Math.floor(i / LIMIT)}`, "wrong password")).toBe(401);
    expect(await signIn("198.51.100.30", "dave", PASSWORD)).toBe(429);
    expect(await signIn("198.51.100.31", "dave", PASSWORD)).toBe(303);
    expect(s.logs.some((l) => l.msg === "sign-in rate limited" && l.by === "address")).toBe(true);
  });
});
