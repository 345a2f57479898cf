import type { Db } from "../store/database.ts";
import { createAccount, findAccountByName } from "../store/accounts.ts";
import { countUsers, findUserByUsername, insertFirstUser, insertUser } from "../store/users.ts";
import type { UserRow } from "../store/tables.ts";
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from "./passwords.ts";

/** Usernames: short, printable, no spaces, so they read the same in logs, the CLI and forms. */
/** The account the first-run setup puts the first user in: the one `serve` bootstraps. */
export const DEFAULT_ACCOUNT = "default";

export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const USERNAME_RULE = "must be 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit";

export type UserProblems = Partial<Record<"username" | "password", string>>;

export function userProblems(username: string, password: string): UserProblems {
  const p: UserProblems = {};
  if (!USERNAME_PATTERN.test(username)) p.username = USERNAME_RULE;
  const pw = passwordProblem(password);
  if (pw) p.password = pw;
  return p;
}

export class UserInputError extends Error {
  constructor(readonly problems: UserProblems) {
    super(Object.entries(problems).map(([k, v]) => `${k} ${v}`).join("; "));
  }
}

/** Creates a user with an argon2id password hash; refuses a taken username or a weak password. */
export async function createUser(db: Db, u: { accountId: number; username: string; password: string; now: number }): Promise<UserRow> {
  const problems = userProblems(u.username, u.password);
  if (!problems.username && (await findUserByUsername(db, u.username))) problems.username = "is already taken";
  if (Object.keys(problems).length) throw new UserInputError(problems);
  return insertUser(db, { accountId: u.accountId, username: u.username, passwordHash: await hashPassword(u.password), now: u.now });
}

/** The user when the password matches; null otherwise, in about the same time either way. */
export async function authenticate(db: Db, username: string, password: string): Promise<UserRow | null> {
  const user = USERNAME_PATTERN.test(username) ? await findUserByUsername(db, username) : undefined;
  if (!user) {
    await verifyPassword(password, await decoyHash());
    return null;
  }
  return (await verifyPassword(password, user.password_hash)) ? user : null;
}

export async function anyUserExists(db: Db): Promise<boolean> {
  return (await countUsers(db)) > 0;
}

/** First-run setup: the first user, in account `default` (created if it is missing); null when a user already exists. */
export async function createFirstUser(db: Db, u: { username: string; password: string; now: number }): Promise<UserRow | null> {
  const problems = userProblems(u.username, u.password);
  if (Object.keys(problems).length) throw new UserInputError(problems);
  const passwordHash = await hashPassword(u.password);
  const account = (await findAccountByName(db, DEFAULT_ACCOUNT)) ?? (await createAccount(db, DEFAULT_ACCOUNT, "enterprise", u.now));
  return insertFirstUser(db, { accountId: account.id, username: u.username, passwordHash, now: u.now });
}
