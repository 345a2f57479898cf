/**
 * No text Vigil stores holds the NUL character (U+0000): PostgreSQL's text cannot, so neither
 * engine does (docs/api-rules.md "Text"). A write that sends one is refused, naming the attribute;
 * text a check brings back from a target has it replaced.
 */
export const NUL_MESSAGE = "must not contain the NUL character (U+0000)";

/** Whether a value from a request body holds a NUL anywhere: in a string, an array item, an object key or value. */
export function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\0");
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === "object") return Object.entries(value).some(([k, v]) => k.includes("\0") || holdsNul(v));
  return false;
}

/** `text` with each NUL replaced by U+FFFD, the character that stands for one that could not be kept. */
export function replaceNul(text: string): string;
export function replaceNul(text: string | null): string | null;
export function replaceNul(text: string | null): string | null {
  return text !== null && text.includes("\0") ? text.replaceAll("\0", "\uFFFD") : text;
}
