import { Elysia } from "elysia";
import { endSession, startSession, SESSION_TTL_MS } from "../auth/sessions.ts";
import { anyUserExists, authenticate, createFirstUser, UserInputError, USERNAME_RULE } from "../auth/users.ts";
import { PASSWORD_MIN } from "../auth/passwords.ts";
import { retryAfterSeconds } from "../lib/fixed-window.ts";
import { randomToken } from "../lib/tokens.ts";
import { clearCookie, CSRF_COOKIE, readCookie, SESSION_COOKIE, setCookie } from "./cookies.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, safeNext, socketIpOf, type RouteCtx } from "./routing.ts";
import { authPage } from "./views/layout.ts";
import { readForm, type WebContext } from "./web-context.ts";

/**
 * Sign-in, sign-out and the first-run setup. Before a session exists, forms carry a CSRF token
 * that is also in an HttpOnly cookie (double submit) and must come from our own origin; so a
 * foreign page can neither sign a visitor in to an attacker's account nor create the first user.
 */
const CSRF_COOKIE_SEC = 2 * 3600;

function preSessionToken(web: WebContext, c: RouteCtx): { token: string; cookie: string | null } {
  const existing = readCookie(c.request, CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{20,100}$/.test(existing)) return { token: existing, cookie: null };
  const token = randomToken(24);
  return { token, cookie: setCookie(CSRF_COOKIE, token, { maxAgeSec: CSRF_COOKIE_SEC, secure: web.secure(c.request, socketIpOf(c)) }) };
}

function sessionCookies(web: WebContext, c: RouteCtx, id: string): string[] {
  const secure = web.secure(c.request, socketIpOf(c));
  return [setCookie(SESSION_COOKIE, id, { maxAgeSec: SESSION_TTL_MS / 1000, secure }), clearCookie(CSRF_COOKIE, { secure })];
}

function withCookies(res: Response, cookies: (string | null)[]): Response {
  for (const c of cookies) if (c) res.headers.append("set-cookie", c);
  return res;
}

function loginForm(o: { token: string; next: string; username?: string; error?: SafeHtml }): SafeHtml {
  return html`<h1>Sign in to Vigil</h1>${o.error ?? ""}
<form method="post" action="/login"><input type="hidden" name="_csrf" value="${o.token}"><input type="hidden" name="next" value="${o.next}">
<div class="field"><label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" required autofocus value="${o.username ?? ""}"></div>
<div class="field"><label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required></div>
<button class="primary" type="submit">Sign in</button></form>`;
}

function setupForm(o: { token: string; username?: string; errors?: Record<string, string> }): SafeHtml {
  const e = o.errors ?? {};
  const err = (k: string) => (e[k] ? html`<span class="err" id="${k}-err">${e[k]}</span>` : "");
  const inv = (k: string) => (e[k] ? html` aria-invalid="true" aria-describedby="${k}-err"` : "");
  return html`<h1>Welcome to Vigil</h1><p>No user exists yet. Create the first one; it signs in to account <strong>default</strong>. More users: <code>vigil user create</code>.</p>
${Object.keys(e).length ? html`<div class="alert error" role="alert" tabindex="-1" id="form-errors"><strong>Please correct ${Object.keys(e).length === 1 ? "this problem" : "these problems"}:</strong><ul>${Object.entries(e).map(([k, v]) => html`<li>${k === "form" ? v : html`<a href="#${k}">${v}</a>`}</li>`)}</ul></div>` : ""}
<form method="post" action="/setup"><input type="hidden" name="_csrf" value="${o.token}">
<div class="field"><label for="username">Username</label><span class="hint">${USERNAME_RULE}</span><input type="text" id="username" name="username" autocomplete="username" required value="${o.username ?? ""}"${inv("username")}>${err("username")}</div>
<div class="field"><label for="password">Password</label><span class="hint">at least ${PASSWORD_MIN} characters</span><input type="password" id="password" name="password" autocomplete="new-password" required${inv("password")}>${err("password")}</div>
<div class="field"><label for="password2">Password again</label><input type="password" id="password2" name="password2" autocomplete="new-password" required${inv("password2")}>${err("password2")}</div>
<button class="primary" type="submit">Create user and sign in</button></form>`;
}

export function authRoutes(web: WebContext) {
  const refused = (request: Request) =>
    send(request, authPage("Request refused", html`<h1>Request refused</h1><p>This form did not come from this site or has expired. <a href="/login">Reload the sign-in page</a> and try again.</p>`), { status: 403 });

  return new Elysia({ name: "web-auth" })
    .onParse(leaveBodyUnread)
    .get("/login", async (c: RouteCtx) => {
      const url = new URL(c.request.url);
      if (!(await anyUserExists(web.app.db))) return redirect("/setup");
      const next = safeNext(url.searchParams.get("next"));
      if (await web.session(c.request)) return redirect(next);
      const { token, cookie } = preSessionToken(web, c);
      return withCookies(send(c.request, authPage("Sign in", loginForm({ token, next }))), [cookie]);
    })
    .post("/login", async (c: RouteCtx) => {
      const form = await readForm(c.request);
      if (!form || !web.preSessionCsrfOk(c.request, form)) return refused(c.request);
      const username = (form.get("username") ?? "").trim();
      const next = safeNext(form.get("next"));
      const token = form.get("_csrf")!;
      const now = web.app.clock.now();
      const ip = web.clientIp(c.request, socketIpOf(c));
      // limits are checked before the (deliberately slow) password hash runs
      const attempt = web.signIns.attempt(username, ip, now);
      if (attempt.refused) {
        const wait = retryAfterSeconds(attempt.refused, now);
        web.log.warn("sign-in rate limited", { ip, by: attempt.by });
        const error = html`<div class="alert error" role="alert" tabindex="-1" id="form-errors">Too many wrong sign-ins from your address. Wait ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""} and try again.</div>`;
        return send(c.request, authPage("Sign in", loginForm({ token, next, username, error })), { status: 429, headers: { "retry-after": String(wait) } });
      }
      const user = await authenticate(web.app.db, username, form.get("password") ?? "");
      if (!user) {
        web.log.info("sign-in failed", { ip });
        const error = html`<div class="alert error" role="alert" tabindex="-1" id="form-errors">Wrong username or password.</div>`;
        return send(c.request, authPage("Sign in", loginForm({ token, next, username, error })), { status: 401 });
      }
      // only failures count: a right password takes its attempt back
      attempt.succeeded();
      const session = await startSession(web.app.db, user.id, now);
      web.log.info("signed in", { user_id: user.id, ip });
      await web.noteDashboardHosts(c.request, socketIpOf(c));
      return withCookies(redirect(next), sessionCookies(web, c, session.id));
    })
    .get("/setup", async (c: RouteCtx) => {
      if (await anyUserExists(web.app.db)) return redirect("/login");
      const { token, cookie } = preSessionToken(web, c);
      return withCookies(send(c.request, authPage("Set up Vigil", setupForm({ token }))), [cookie]);
    })
    .post("/setup", async (c: RouteCtx) => {
      const form = await readForm(c.request);
      if (!form || !web.preSessionCsrfOk(c.request, form)) return refused(c.request);
      if (await anyUserExists(web.app.db)) return redirect("/login");
      const token = form.get("_csrf")!;
      const username = (form.get("username") ?? "").trim();
      const password = form.get("password") ?? "";
      if (password !== (form.get("password2") ?? "")) {
        return send(c.request, authPage("Set up Vigil", setupForm({ token, username, errors: { password2: "The two passwords differ." } })), { status: 422 });
      }
      try {
        const user = await createFirstUser(web.app.db, { username, password, now: web.app.clock.now() });
        if (!user) return redirect("/login"); // someone else finished the setup first
        web.log.info("first user created by the setup screen", { user_id: user.id });
        const session = await startSession(web.app.db, user.id, web.app.clock.now());
        await web.noteDashboardHosts(c.request, socketIpOf(c));
        return withCookies(redirect("/"), sessionCookies(web, c, session.id));
      } catch (e) {
        if (!(e instanceof UserInputError)) throw e;
        const errors = Object.fromEntries(Object.entries(e.problems).map(([k, v]) => [k, `${k === "username" ? "Username" : "Password"} ${v}.`]));
        return send(c.request, authPage("Set up Vigil", setupForm({ token, username, errors })), { status: 422 });
      }
    })
    .post("/logout", async (c: RouteCtx) => {
      const form = await readForm(c.request);
      const session = await web.session(c.request);
      if (session && (!form || !web.csrfOk(c.request, session, form))) return refused(c.request);
      const id = readCookie(c.request, SESSION_COOKIE);
      if (id) await endSession(web.app.db, id);
      return withCookies(redirect("/login"), [clearCookie(SESSION_COOKIE, { secure: web.secure(c.request, socketIpOf(c)) })]);
    });
}
