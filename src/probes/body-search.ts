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

  constructor(texts: readonly string[]) {
    this.missing = [...new Set(texts)].filter((t) => t.length > 0).map((t) => Buffer.from(t, "utf8"));
    this.keep = Math.max(0, ...this.missing.map((b) => b.length - 1));
  }

  /** Feeds the next chunk; true once every text has been seen. */
  feed(chunk: Buffer): boolean {
    if (this.missing.length === 0) return true;
    const window = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    for (let i = this.missing.length - 1; i >= 0; i--) if (window.includes(this.missing[i]!)) this.missing.splice(i, 1);
    this.tail = Buffer.from(window.subarray(Math.max(0, window.length - this.keep)));
    return this.missing.length === 0;
  }
}

/**
 * What ends an http check's read early: every text it expects found, when nothing else needs the
 * rest of the body (JSON assertions need all of it). Undefined when the whole body is wanted.
 */
export function stopWhenFound(texts: readonly (string | null | undefined)[], needsWholeBody: boolean): ((chunk: Buffer) => boolean) | undefined {
  const wanted = texts.filter((t): t is string => typeof t === "string" && t.length > 0);
  if (needsWholeBody || wanted.length === 0) return undefined;
  const search = new BodySearch(wanted);
  return (chunk) => search.feed(chunk);
}
