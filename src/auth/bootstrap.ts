import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCOPES } from "../domain/scopes.ts";
import type { Logger } from "../lib/logger.ts";
import { countAccounts, createAccount } from "../store/accounts.ts";
import type { Db } from "../store/database.ts";
import { issueApiToken } from "./api-tokens.ts";

export const BOOTSTRAP_TOKEN_FILE = "bootstrap-token";

/**
 * First start (decisions.md "Running it"): with no account yet, create `default` on the enterprise
 * plan with an all-scopes token written to <data>/bootstrap-token (0600). The path is logged, never
 * the token.
 */
export async function bootstrapIfEmpty(db: Db, dataDir: string, now: number, log: Logger): Promise<string | null> {
  if ((await countAccounts(db)) > 0) return null;
  const account = await createAccount(db, "default", "enterprise", now);
  const { token } = await issueApiToken(db, { accountId: account.id, scopes: SCOPES, label: "bootstrap", now });
  const path = join(dataDir, BOOTSTRAP_TOKEN_FILE);
  writeFileSync(path, token + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
  log.info("first start: created account 'default' and an all-scopes API token", { token_file: path });
  return path;
}
