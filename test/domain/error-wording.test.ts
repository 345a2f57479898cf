import { expect, test } from "bun:test";
import { CHECK_ERROR_CODES } from "../../src/domain/check-result.ts";
import { PUBLIC_ERROR_WORDING, publicErrorWording } from "../../src/domain/error-wording.ts";

test("every error code has a plain wording for anonymous visitors, and the table has no stale codes", () => {
  for (const code of CHECK_ERROR_CODES) {
    const wording = Object.hasOwn(PUBLIC_ERROR_WORDING, code) ? PUBLIC_ERROR_WORDING[code] : undefined;
    // a sentence fragment a visitor can read: capitalised, no code syntax, short
    expect({ code, ok: typeof wording === "string" && /^[A-Z][A-Za-z ]{2,40}$/.test(wording) }).toEqual({ code, ok: true });
    expect(publicErrorWording(code)).toBe(wording!);
  }
  expect(Object.keys(PUBLIC_ERROR_WORDING).sort()).toEqual([...CHECK_ERROR_CODES].sort());
});

test("a code this build does not know reads 'Check failed'; no code, no wording", () => {
  expect(publicErrorWording("some_future_code")).toBe("Check failed");
  expect(publicErrorWording("toString")).toBe("Check failed");
  expect(publicErrorWording(null)).toBeNull();
});
