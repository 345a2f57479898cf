/**
 * API scenario tables: each row is one request and what its answer must and must not hold, run as
 * its own test against a real server (the shape of PocketBase's API tests).
 *
 * @example
 * scenarios(() => s, [
 *   { name: "an unknown id is a 404", method: "GET", path: "/api/v1/monitors/999999", status: 404, code: "not_found" },
 *   { name: "another account's monitor is a 404", method: "GET", path: () => `/api/v1/monitors/${id}`, token: () => other.token, status: 404 },
 *   { name: "a bad name is a 422", method: "POST", path: "/api/v1/status-pages", body: { name: " " }, status: 422, details: { name: "must not be blank" } },
 * ]);
 */
import { expect, test } from "bun:test";
import type { ApiResult, TestServer } from "./server.ts";

/** A value, or a function that gives it when the test runs (ids and tokens are made in beforeAll). */
export type Later<T> = T | (() => T);

export interface Scenario {
  name: string;
  method: string;
  path: Later<string>;
  /** the client's default token unless given; null sends no Authorization header */
  token?: Later<string | null>;
  /** a string is sent as it is, anything else as JSON */
  body?: Later<unknown>;
  headers?: Later<Record<string, string>>;
  status: number;
  /** the answer's error.code */
  code?: string;
  /** strings the body text must hold, or an object the JSON body must match (toMatchObject) */
  contains?: string[] | Record<string, unknown>;
  /** strings the body text must not hold */
  notContains?: string[];
  /** error.details has exactly these keys; given as a record, each key's messages hold its fragment */
  details?: string[] | Record<string, string>;
  /** anything else to check of the answer */
  check?: (res: ApiResult) => unknown;
}

export type ApiClient = Pick<TestServer, "api">;

const now = <T>(v: Later<T>): T => (typeof v === "function" ? (v as () => T)() : v);

/** Sends the row's request and checks the answer against the row. */
export async function runScenario(client: ApiClient, row: Scenario): Promise<ApiResult> {
  const path = now(row.path);
  const res = await client.api(row.method, path, now(row.body), { token: now(row.token), headers: now(row.headers) });
  expect(res.status, `${row.method} ${path} answered ${res.status}: ${res.text.slice(0, 500)}`).toBe(row.status);
  if (row.code !== undefined) expect(res.json?.error?.code).toBe(row.code);
  if (Array.isArray(row.contains)) for (const s of row.contains) expect(res.text).toContain(s);
  else if (row.contains) expect(res.json).toMatchObject(row.contains);
  for (const s of row.notContains ?? []) expect(res.text).not.toContain(s);
  if (row.details) {
    const details: Record<string, string[]> = res.json?.error?.details ?? {};
    const expected = Array.isArray(row.details) ? Object.fromEntries(row.details.map((k) => [k, ""])) : row.details;
    expect(Object.keys(details).sort()).toEqual(Object.keys(expected).sort());
    if (!Array.isArray(row.details)) for (const [key, fragment] of Object.entries(expected)) expect(details[key]!.join(" | ")).toContain(fragment);
  }
  await row.check?.(res);
  return res;
}

/** Registers each row as its own test; `client` is called when the test runs. */
export function scenarios(client: () => ApiClient, rows: Scenario[]): void {
  for (const row of rows) test(row.name, async () => void (await runScenario(client(), row)));
}
