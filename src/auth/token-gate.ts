import { verifyApiToken } from "./api-tokens.ts";
import type { AppContext } from "../context.ts";
import { retryAfterSeconds, type FixedWindowLimiter } from "../lib/fixed-window.ts";
import type { TokenWithAccount } from "../store/api-tokens.ts";
import { ApiError, invalidToken, planFeatureDisabled, rateLimited } from "../http/errors.ts";
import type { RequestState } from "../http/request-state.ts";

/** `Bearer <token>`: the scheme is case-insensitive (RFC 9110 section 11.1), as `bearer` or `BEARER`. */
const BEARER = /^bearer +([A-Za-z0-9._~+/=-]+)$/i;

/** The token of an `Authorization: Bearer` header, or null when there is none or it is malformed. */
export function bearerToken(header: string | null | undefined): string | null {
  const m = header ? BEARER.exec(header.trim()) : null;
  return m ? m[1]! : null;
}

/**
 * Authentication, plan and rate limit of an API token, in docs/api-rules.md "Order of checks". Every
 * endpoint that takes an API token (/api/v1, /metrics, /peer/v1/peers) admits it here, so a token
 * meets the same plan rule and the same limit per window wherever it is sent. The window is its
 * account's API window (ctx.apiRateLimits) unless `windows` says otherwise: /metrics counts scrapes
 * in a window of their own (docs/api-rules.md "Rate limits and headers"). The window's verdict goes
 * on `state` before a 429, for its headers.
 */
export async function admitApiToken(
  ctx: AppContext,
  state: RequestState,
  token: string,
  unknown: () => ApiError = invalidToken,
  windows: FixedWindowLimiter<number> = ctx.apiRateLimits,
): Promise<TokenWithAccount> {
  const found = await verifyApiToken(ctx.db, token);
  if (!found) throw unknown();
  if (found.account.plan === "free") throw planFeatureDisabled();
  const now = ctx.clock.now();
  const verdict = windows.hit(found.account.id, ctx.config.rateLimits[found.account.plan], now);
  state.rateLimit = verdict;
  if (!verdict.allowed) throw rateLimited(retryAfterSeconds(verdict, now));
  return found;
}
