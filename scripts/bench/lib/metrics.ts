/** Reading the server's /metrics (Prometheus text; the benches start it with --metrics-public). */

export type Scrape = Map<string, number>;

export async function scrape(url: string): Promise<Scrape> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Scrape = new Map();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const sp = line.lastIndexOf(" ");
    out.set(line.slice(0, sp), Number(line.slice(sp + 1)));
  }
  return out;
}

/** Sum of every series of `name` whose labels contain all of `match` (e.g. 'status="up"'). */
export function total(s: Scrape, name: string, ...match: string[]): number {
  let n = 0;
  for (const [k, v] of s) if ((k === name || k.startsWith(`${name}{`)) && match.every((m) => k.includes(m))) n += v;
  return n;
}

/**
 * Quantile of a Prometheus histogram between two scrapes, as the upper bound of the bucket that
 * holds it (what a histogram can say). Returns seconds, or Infinity past the last bucket.
 */
export function histogramQuantile(before: Scrape, after: Scrape, name: string, q: number): { le: number; count: number } {
  const buckets: { le: number; count: number }[] = [];
  for (const [k, v] of after) {
    const m = k.match(new RegExp(`^${name}_bucket\\{.*le="([^"]+)".*\\}$`));
    if (!m) continue;
    const le = m[1] === "+Inf" ? Infinity : Number(m[1]);
    buckets.push({ le, count: v - (before.get(k) ?? 0) });
  }
  buckets.sort((a, b) => a.le - b.le);
  const n = buckets.at(-1)?.count ?? 0;
  const rank = Math.ceil(q * n);
  for (const b of buckets) if (b.count >= rank && n > 0) return { le: b.le, count: n };
  return { le: NaN, count: n };
}
