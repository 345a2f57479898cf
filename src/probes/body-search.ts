/**
 * Finds the texts a check looks for in a body as it streams, so the read can end once every one is
 * found (README, Monitors: a page's keyword on its first line settles the check without reading
 * megabytes after it). A text split across two chunks is found: the last bytes of each chunk are
 * kept to search together with the next.
 */
export class BodySearch {
  private readonly missing: Buffer[];
  private tail = Buffer.alloc(0);
  private readonly keep: number;
  /** bytes seen after the end of the last text found, once every text is found */
  private after = -1;

  /** `reach`: bytes to read past the last text found before the search is satisfied */
  constructor(texts: readonly string[], private readonly reach = 0) {
    this.missing = [...new Set(texts)].filter((t) => t.length > 0).map((t) => Buffer.from(t, "utf8"));
    this.keep = Math.max(0, ...this.missing.map((b) => b.length - 1));
  }

  /** Feeds the next chunk; true once every text has been seen, and `reach` bytes after it. */
  feed(chunk: Buffer): boolean {
    if (this.after >= 0) {
      this.after += chunk.length;
      return this.after >= this.reach;
    }
    const window = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    let end = -1;
    for (let i = this.missing.length - 1; i >= 0; i--) {
      const at = window.indexOf(this.missing[i]!);
      if (at < 0) continue;
      end = Math.max(end, at + this.missing[i]!.length);
      this.missing.splice(i, 1);
    }
    this.tail = Buffer.from(window.subarray(Math.max(0, window.length - this.keep)));
    if (this.missing.length > 0) return false;
    // a text found in this window ends after every text found in earlier ones
    this.after = window.length - Math.max(end, 0);
    return this.after >= this.reach;
  }
}

/**
 * What ends an http check's read early: every text it expects found, when nothing else needs the
 * rest of the body (JSON assertions need all of it), and `reach` bytes read past the last one
 * (request-auth.ts, secretReach). Undefined when the whole body is wanted.
 */
export function stopWhenFound(texts: readonly (string | null | undefined)[], needsWholeBody: boolean, reach = 0): ((chunk: Buffer) => boolean) | undefined {
  const wanted = texts.filter((t): t is string => typeof t === "string" && t.length > 0);
  if (needsWholeBody || wanted.length === 0) return undefined;
  const search = new BodySearch(wanted, reach);
  return (chunk) => search.feed(chunk);
}
