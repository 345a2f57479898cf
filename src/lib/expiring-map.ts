/**
 * A map whose entries each carry their own end of life, bounded in size: a read past an entry's
 * end forgets it, and beyond `max` entries the one written longest ago goes first. For small
 * in-process memories of answers fetched from elsewhere (RDAP lookups).
 */
export class ExpiringMap<V> {
  private readonly entries = new Map<string, { until: number; value: V }>();

  constructor(private readonly max: number) {}

  /** The value under `key` if its end (epoch ms) is still after `now`. */
  get(key: string, now: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until > now) return e.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, until: number): void {
    this.entries.delete(key);
    this.entries.set(key, { until, value });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
