import { createUser, UserInputError } from "../auth/users.ts";
import { toIso } from "../lib/dates.ts";
import { findAccountByName } from "../store/accounts.ts";
import { deleteUserByUsername, listUsers } from "../store/users.ts";
import { openCommandStore, parseCommand, table, UsageError, type CliIo } from "./io.ts";

export const USER_HELP = `Usage:
  vigil user create USERNAME [--account NAME] [--password-stdin] [--data DIR]
      create a dashboard user in account NAME (default: default). The password is read from
      standard input (first line), never from a flag, so it does not land in shell history:
        printf '%s\\n' "$PASSWORD" | vigil user create alice --account acme --password-stdin
      On a terminal it is prompted for, without echo. At least 10 characters.
  vigil user list [--data DIR]              list users (never their password hashes)
  vigil user delete USERNAME [--data DIR]   delete a user and sign out their sessions

The first user can also be created in the browser: with no user at all, the dashboard shows a
one-time setup screen.`;

/** Tests pass the password through this; the real CLI reads standard input. */
export interface UserCliIo extends CliIo {
  readPassword?(): Promise<string>;
}

async function readPasswordFromStdin(io: CliIo): Promise<string> {
  if (process.stdin.isTTY) {
    process.stderr.write("Password: ");
    const stty = (mode: string) => Bun.spawnSync(["stty", mode], { stdin: "inherit", stdout: "ignore", stderr: "ignore" });
    stty("-echo");
    try {
      for await (const line of console) return line;
      return "";
    } finally {
      stty("echo");
      io.err("");
    }
  }
  const text = await Bun.stdin.text();
  return text.split(/\r?\n/, 1)[0] ?? "";
}

export async function userCommand(args: string[], io: UserCliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === "--help" || sub === "-h") return io.out(USER_HELP), sub ? 0 : 2;
  if (sub === "create") {
    const { values, positionals } = parseCommand(rest, { account: { type: "string" }, "password-stdin": { type: "boolean" } }, 1);
    if (values.help) return io.out(USER_HELP), 0;
    const username = positionals[0];
    if (!username) throw new UsageError("user create needs a USERNAME");
    const store = await openCommandStore(values, io.env);
    try {
      const accountName = (values.account as string | undefined) ?? "default";
      const account = await findAccountByName(store.db, accountName);
      if (!account) {
        io.err(`error: no account named "${accountName}" (see: vigil account list)`);
        return 1;
      }
      const password = await (io.readPassword ? io.readPassword() : readPasswordFromStdin(io));
      try {
        const user = await createUser(store.db, { accountId: account.id, username, password, now: Date.now() });
        io.out(`created user ${user.username} (id ${user.id}) in account ${account.name}`);
        return 0;
      } catch (e) {
        if (!(e instanceof UserInputError)) throw e;
        io.err(`error: ${e.message}`);
        return 1;
      }
    } finally {
      await store.close();
    }
  }
  if (sub === "list") {
    const { values } = parseCommand(rest, {});
    if (values.help) return io.out(USER_HELP), 0;
    const store = await openCommandStore(values, io.env);
    try {
      const rows = await listUsers(store.db);
      table(io, ["ID", "USERNAME", "ACCOUNT", "CREATED"], rows.map((u) => [u.id, u.username, u.account_name, toIso(u.created_at)]));
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "delete") {
    const { values, positionals } = parseCommand(rest, {}, 1);
    if (values.help) return io.out(USER_HELP), 0;
    const username = positionals[0];
    if (!username) throw new UsageError("user delete needs a USERNAME (see: vigil user list)");
    const store = await openCommandStore(values, io.env);
    try {
      if (!(await deleteUserByUsername(store.db, username))) {
        io.err(`error: no user named "${username}"`);
        return 1;
      }
      io.out(`deleted user ${username}; their sessions are signed out`);
      return 0;
    } finally {
      await store.close();
    }
  }
  throw new UsageError(`unknown user command "${sub}"`);
}
