import type { Scope } from "../domain/scopes.ts";
import { hashToken, randomToken } from "../lib/tokens.ts";
import { findActiveTokenByHash, insertApiToken, type TokenWithAccount } from "../store/api-tokens.ts";
import type { Db } from "../store/database.ts";
import type { ApiTokenRow } from "../store/tables.ts";

/** API tokens start with `vgl_`, peer tokens with `vglp_`: a leaked string says what it is. */
export const API_TOKEN_PREFIX = "vgl_";
export const PEER_TOKEN_PREFIX = "vglp_";

/** Creates a token and returns its plaintext, which exists only in this return value. */
export async function issueApiToken(
  db: Db,
  o: { accountId: number; scopes: readonly Scope[]; label: string | null; now: number },
): Promise<{ token: string; row: ApiTokenRow }> {
  const token = randomToken(32, API_TOKEN_PREFIX);
  const row = await insertApiToken(db, { ...o, tokenHash: hashToken(token) });
  return { token, row };
}

/**
 * Resolves a presented bearer token. Lookup is by SHA-256 hash through a unique index, so no
 * secret bytes are ever compared one by one; the store never holds the plaintext.
 */
export async function verifyApiToken(db: Db, presented: string): Promise<TokenWithAccount | undefined> {
  if (!presented.startsWith(API_TOKEN_PREFIX) || presented.length > 200) return undefined;
  return findActiveTokenByHash(db, hashToken(presented));
}
