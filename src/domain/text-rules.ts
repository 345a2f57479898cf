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

/**
 * A name or a title is one line: it is shown in a heading, a mail's Subject, a feed's title. Line
 * breaks (CR, LF, U+2028, U+2029), tabs and the other control characters (C0, DEL, C1) are refused
 * (README "Status pages"); spaces around the text are dropped before this is asked.
 */
export const ONE_LINE_MESSAGE = "must be one line: no line breaks, tabs or other control characters";

export function breaksLine(text: string): boolean {
  return /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text);
}
