import { PLANS, type Plan } from "../domain/scopes.ts";
import { toIso } from "../lib/dates.ts";
import { createAccount, findAccountByName, listAccounts } from "../store/accounts.ts";
import { openStore } from "../store/database.ts";
import { dataDirOf, parseCommand, table, UsageError, type CliIo } from "./io.ts";

export const ACCOUNT_HELP = `Usage:
  vigil account create NAME --plan free|pro|enterprise [--data DIR]   create an account; prints its id
  vigil account list [--data DIR]                                      list accounts

Accounts are tenants: nothing of one is visible to another. The API is open to pro and enterprise plans.`;

export async function accountCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === "--help" || sub === "-h") return io.out(ACCOUNT_HELP), sub ? 0 : 2;
  if (sub === "create") {
    const { values, positionals } = parseCommand(rest, { plan: { type: "string" } }, 1);
    if (values.help) return io.out(ACCOUNT_HELP), 0;
    const name = positionals[0];
    if (!name) throw new UsageError("account create needs a NAME");
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) throw new UsageError("NAME must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
    const plan = values.plan as string | undefined;
    if (!plan || !(PLANS as readonly string[]).includes(plan)) throw new UsageError("--plan must be free, pro or enterprise");
    const store = openStore(dataDirOf(values, io.env));
    try {
      if (await findAccountByName(store.db, name)) {
        io.err(`error: an account named "${name}" already exists`);
        return 1;
      }
      const account = await createAccount(store.db, name, plan as Plan, Date.now());
      io.out(String(account.id));
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "list") {
    const { values } = parseCommand(rest, {});
    if (values.help) return io.out(ACCOUNT_HELP), 0;
    const store = openStore(dataDirOf(values, io.env));
    try {
      const rows = await listAccounts(store.db);
      table(io, ["ID", "NAME", "PLAN", "CREATED"], rows.map((a) => [a.id, a.name, a.plan, toIso(a.created_at)]));
      return 0;
    } finally {
      await store.close();
    }
  }
  throw new UsageError(`unknown account command "${sub}"`);
}
