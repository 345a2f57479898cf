import { issueApiToken } from "../auth/api-tokens.ts";
import { parseScopes } from "../domain/scopes.ts";
import { toIso } from "../lib/dates.ts";
import { findAccountByName } from "../store/accounts.ts";
import { listApiTokens, revokeApiToken } from "../store/api-tokens.ts";
import { openCommandStore, parseCommand, table, UsageError, type CliIo } from "./io.ts";

export const TOKEN_HELP = `Usage:
  vigil token create --account NAME --scopes LIST [--label TEXT] [--data DIR]
      create an API token; LIST is comma-separated scopes or "all". The token is printed once,
      alone on the last line; only its hash is stored.
  vigil token list [--account NAME] [--data DIR]    list tokens (never their values)
  vigil token revoke ID [--data DIR]                revoke a token at once

Scopes: monitors:read monitors:write checks:read incidents:read status_pages:read status_pages:write`;

export async function tokenCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === "--help" || sub === "-h") return io.out(TOKEN_HELP), sub ? 0 : 2;
  if (sub === "create") {
    const { values } = parseCommand(rest, { account: { type: "string" }, scopes: { type: "string" }, label: { type: "string" } });
    if (values.help) return io.out(TOKEN_HELP), 0;
    if (!values.account) throw new UsageError("token create needs --account NAME");
    if (!values.scopes) throw new UsageError("token create needs --scopes LIST (comma-separated, or all)");
    const { scopes, unknown } = parseScopes(values.scopes as string);
    if (unknown.length) throw new UsageError(`unknown scope(s): ${unknown.join(", ")}`);
    if (!scopes.length) throw new UsageError("--scopes names no scope");
    const store = await openCommandStore(values, io.env);
    try {
      const account = await findAccountByName(store.db, values.account as string);
      if (!account) {
        io.err(`error: no account named "${values.account}" (see: vigil account list)`);
        return 1;
      }
      const { token, row } = await issueApiToken(store.db, { accountId: account.id, scopes, label: (values.label as string) ?? null, now: Date.now() });
      io.out(`created token ${row.id} for account ${account.name} with scopes ${scopes.join(",")}; it is shown only now:`);
      io.out(token);
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "list") {
    const { values } = parseCommand(rest, { account: { type: "string" } });
    if (values.help) return io.out(TOKEN_HELP), 0;
    const store = await openCommandStore(values, io.env);
    try {
      let accountId: number | undefined;
      if (values.account) {
        const account = await findAccountByName(store.db, values.account as string);
        if (!account) {
          io.err(`error: no account named "${values.account}"`);
          return 1;
        }
        accountId = account.id;
      }
      const rows = await listApiTokens(store.db, accountId);
      table(io, ["ID", "ACCOUNT", "LABEL", "SCOPES", "CREATED", "LAST USED", "REVOKED"], rows.map((t) => [
        t.id, t.account_name, t.label, t.scopes, toIso(t.created_at), toIso(t.last_used_at), toIso(t.revoked_at),
      ]));
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "revoke") {
    const { values, positionals } = parseCommand(rest, {}, 1);
    if (values.help) return io.out(TOKEN_HELP), 0;
    const id = Number(positionals[0]);
    if (!positionals[0] || !Number.isInteger(id) || id < 1) throw new UsageError("token revoke needs a token ID (see: vigil token list)");
    const store = await openCommandStore(values, io.env);
    try {
      if (!(await revokeApiToken(store.db, id, Date.now()))) {
        io.err(`error: no active token with id ${id}`);
        return 1;
      }
      io.out(`revoked token ${id}`);
      return 0;
    } finally {
      await store.close();
    }
  }
  throw new UsageError(`unknown token command "${sub}"`);
}
