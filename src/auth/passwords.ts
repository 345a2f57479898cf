/**
 * Dashboard passwords: argon2id through Bun.password (memory-hard, salted, self-describing PHC
 * string), unlike API tokens, which carry enough randomness for a fast hash (lib/tokens.ts).
 */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash);
  } catch {
    return false; // a malformed stored hash never signs anyone in
  }
}

/**
 * A hash of a password nobody knows, verified when the username does not exist, so a failed login
 * takes as long for an unknown user as for a wrong password.
 */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  return (decoy ??= hashPassword(crypto.randomUUID()));
}
