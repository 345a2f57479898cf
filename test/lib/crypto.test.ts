import { describe, expect, test } from "bun:test";
import { createSecretBox, parseSecretKey } from "../../src/lib/secret-box.ts";
import { hashToken, randomToken, safeEqual } from "../../src/lib/tokens.ts";
import { FixedWindowLimiter, retryAfterSeconds } from "../../src/lib/fixed-window.ts";

describe("secret box (AES-256-GCM)", () => {
  const box = createSecretBox(Buffer.alloc(32, 7));
  test("round trip, fresh IV each time, no plaintext in the sealed form", () => {
    const a = box.seal("hunter2"), b = box.seal("hunter2");
    expect(a).not.toBe(b);
    expect(a).not.toContain("hunter2");
    expect(box.open(a)).toBe("hunter2");
  });
  test("tampering or another key fails", () => {
    const sealed = box.seal("x");
    const parts = sealed.split(".");
    parts[3] = Buffer.from("y").toString("base64url");
    expect(() => box.open(parts.join("."))).toThrow();
    expect(() => createSecretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow();
  });
  test("keys: 64 hex or base64 of 32 bytes", () => {
    expect(parseSecretKey("ab".repeat(32)).length).toBe(32);
    expect(parseSecretKey(Buffer.alloc(32, 1).toString("base64")).length).toBe(32);
    expect(() => parseSecretKey("short")).toThrow();
  });
});

describe("tokens", () => {
  test("random, prefixed, URL-safe, at least 128 bits", () => {
    const t = randomToken(16, "p_");
    expect(t).toMatch(/^p_[A-Za-z0-9_-]{22}$/);
    expect(randomToken()).not.toBe(randomToken());
  });
  test("hash is stable sha-256 hex; safeEqual", () => {
    expect(hashToken("a")).toBe("ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb");
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
  });
});

describe("fixed window limiter", () => {
  test("window starts with the first request and resets after windowMs", () => {
    const l = new FixedWindowLimiter<string>(60_000);
    expect(l.hit("a", 2, 1000).allowed).toBe(true);
    expect(l.hit("a", 2, 2000).remaining).toBe(0);
    const over = l.hit("a", 2, 30_000);
    expect(over.allowed).toBe(false);
    expect(over.resetAt).toBe(61_000);
    expect(retryAfterSeconds(over, 30_000)).toBe(31);
    expect(retryAfterSeconds(over, 60_999)).toBe(1);
    expect(l.hit("a", 2, 61_000).allowed).toBe(true);
    expect(l.hit("b", 2, 30_000).allowed).toBe(true);
  });
});
