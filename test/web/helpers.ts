import { createUser } from "../../src/auth/users.ts";
import { findAccountByName } from "../../src/store/accounts.ts";
import type { TestServer } from "../helpers/server.ts";

export const PASSWORD = "correct horse battery staple";

/** A browser-like client: a cookie jar, no automatic redirects, same-origin Origin on POSTs. */
export class WebClient {
  readonly cookies = new Map<string, string>();
  lastCsrf: string | null = null;
  constructor(readonly base: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private remember(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq), value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(c) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<{ res: Response; text: string }> {
    const res = await fetch(this.base + path, { redirect: "manual", headers: { cookie: this.cookieHeader(), ...headers } });
    this.remember(res);
    const text = await res.text();
    const m = /name="_csrf" value="([^"]+)"/.exec(text);
    if (m) this.lastCsrf = m[1]!;
    return { res, text };
  }

  /** POSTs a form; `_csrf` is the last one seen unless given; Origin is this server unless overridden. */
  async post(path: string, fields: Record<string, string | string[]> | URLSearchParams, o: { headers?: Record<string, string>; csrf?: string | null } = {}): Promise<{ res: Response; text: string }> {
    const body = fields instanceof URLSearchParams ? fields : new URLSearchParams();
    if (!(fields instanceof URLSearchParams)) for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    const csrf = o.csrf === undefined ? this.lastCsrf : o.csrf;
    if (csrf !== null && !body.has("_csrf")) body.set("_csrf", csrf);
    const res = await fetch(this.base + path, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: this.base, cookie: this.cookieHeader(), ...o.headers },
      body,
    });
    this.remember(res);
    const text = await res.text();
    const m = /name="_csrf" value="([^"]+)"/.exec(text);
    if (m) this.lastCsrf = m[1]!;
    return { res, text };
  }
}

/** Creates a user in `account` (default: the bootstrap account) straight through the auth functions. */
export async function addUser(s: TestServer, username: string, account = "default"): Promise<void> {
  const a = await findAccountByName(s.ctx.db, account);
  if (!a) throw new Error(`no account ${account}`);
  await createUser(s.ctx.db, { accountId: a.id, username, password: PASSWORD, now: Date.now() });
}

/** A client signed in through the real login form. */
export async function signedInClient(s: TestServer, username: string): Promise<WebClient> {
  const c = new WebClient(s.url);
  await c.get("/login");
  const { res } = await c.post("/login", { username, password: PASSWORD, next: "/" });
  if (res.status !== 303) throw new Error(`login failed: ${res.status}`);
  await c.get("/");
  return c;
}

/** Every validation message of a rendered form, in order ("<label> <message>"). */
export function formErrors(page: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of page.matchAll(/<span class="err" id="f-([a-z_]+)-err">([\s\S]*?)<\/span>/g)) out[m[1]!] = m[2]!.split("<br>");
  return out;
}

/** Monitor names in the order the dashboard's monitor list shows them. */
export function listedMonitorNames(page: string): string[] {
  return [...page.matchAll(/<tr data-monitor="\d+">[\s\S]*?<a href="\/monitors\/\d+">([^<]+)<\/a>/g)].map((m) => unescape(m[1]!));
}

/** Decodes the few entities our escaping produces. */
export function unescape(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}
