import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCOPES } from "../domain/scopes.ts";
import type { Logger } from "../lib/logger.ts";
import { PRIVATE_FILE_MODE, restrictToOwner } from "../lib/private-files.ts";
import { countAccounts, createAccount } from "../store/accounts.ts";
import type { Db } from "../store/database.ts";
import { issueApiToken } from "./api-tokens.ts";

export const BOOTSTRAP_TOKEN_FILE = "bootstrap-token";

/**
 * First start (docs/api-rules.md "API tokens"): with no account yet, create `default` on the enterprise
 * plan with an all-scopes token written to <data>/bootstrap-token (0600). The path is logged, never
 * the token. A token file an older build left readable by others is made 0600 on every start.
 */
export async function bootstrapIfEmpty(db: Db, dataDir: string, now: number, log: Logger): Promise<string | null> {
  const path = join(dataDir, BOOTSTRAP_TOKEN_FILE);
  restrictToOwner(path);
  if ((await countAccounts(db)) > 0) return null;
  let account;
  try {
    account = await createAccount(db, "default", "enterprise", now);
  } catch (err) {
    // several instances started at once on an empty PostgreSQL database (README "Several
    // instances"): one of them made the account and holds the token; the others go on without
    if ((await countAccounts(db)) > 0) {
      log.info("first start: another instance created account 'default'; its data directory holds the bootstrap token");
      return null;
    }
    throw err;
  }
  const { token } = await issueApiToken(db, { accountId: account.id, scopes: SCOPES, label: "bootstrap", now });
  writeFileSync(path, token + "\n", { mode: PRIVATE_FILE_MODE });
  chmodSync(path, PRIVATE_FILE_MODE);
  log.info("first start: created account 'default' and an all-scopes API token", { token_file: path });
  return path;
}
