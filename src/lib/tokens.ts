import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Random secrets shown to a person once. base64url keeps them URL-safe (heartbeat URLs) and
 * a prefix tells a leaked string's kind at a glance (as GitHub's ghp_ tokens do).
 */
export function randomToken(bytes = 24, prefix = ""): string {
  return prefix + randomBytes(bytes).toString("base64url");
}

/**
 * Tokens are stored as SHA-256 hashes. They carry 192 random bits, so a fast hash is enough: there
 * is nothing to brute-force that a slow hash would protect (passwords use Bun.password instead).
 */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Constant-time comparison of two strings, safe when the lengths differ. */
export function safeEqual(a: string, b: string): boolean {
  const ab = createHash("sha256").update(a).digest();
  const bb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ab, bb) && a.length === b.length;
}
