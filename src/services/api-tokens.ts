import { issueApiToken } from "../auth/api-tokens.ts";
import type { AppContext } from "../context.ts";
import type { Scope } from "../domain/scopes.ts";
import * as store from "../store/api-tokens.ts";
import type { Actor } from "./actor.ts";

/**
 * An account's API tokens as the dashboard manages them, with the same functions as `vigil token`
 * (auth/api-tokens.ts): listed without their values, issued with scopes (the value exists only in
 * what `issueAccountToken` returns), revoked.
 */
export interface ApiTokenSummary {
  id: number;
  label: string | null;
  scopes: Scope[];
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export async function listAccountTokens(ctx: AppContext, actor: Actor): Promise<ApiTokenSummary[]> {
  const rows = await store.listApiTokens(ctx.db, actor.accountId);
  return rows.map((t) => ({ id: t.id, label: t.label, scopes: t.scopes.split(",") as Scope[], createdAt: t.created_at, lastUsedAt: t.last_used_at, revokedAt: t.revoked_at }));
}

export async function issueAccountToken(ctx: AppContext, actor: Actor, o: { scopes: readonly Scope[]; label: string | null }): Promise<{ id: number; token: string }> {
  const { token, row } = await issueApiToken(ctx.db, { accountId: actor.accountId, scopes: o.scopes, label: o.label, now: ctx.clock.now() });
  return { id: row.id, token };
}

/** False when the account has no such token, or it is revoked already. */
export async function revokeAccountToken(ctx: AppContext, actor: Actor, id: number): Promise<boolean> {
  return store.revokeApiToken(ctx.db, id, ctx.clock.now(), actor.accountId);
}
