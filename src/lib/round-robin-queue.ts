/**
 * Items waiting by owner, taken one owner at a time in turn: each owner's items in the order they
 * came, and the owners in the order their turn comes. An owner whose item was just taken goes to
 * the back of the line only when the next item is taken, so an owner arriving meanwhile is served
 * before it: a newcomer waits behind one item of each owner already waiting, never behind an
 * owner's whole backlog. The pattern worker takes checks' batches this way, account by account
 * (scheduler/pattern-thread.ts).
 */
export class RoundRobinQueue<T> {
  /** owners with waiting items, in the order their turn comes (a Map keeps insertion order) */
  private lines = new Map<number, T[]>();
  /** the owner served last, with the items it still has: back in line at the next `shift` */
  private served: { owner: number; line: T[] } | null = null;
  private count = 0;

  /** Items waiting, of every owner. */
  get size(): number {
    return this.count;
  }

  push(owner: number, item: T): void {
    let line = this.served?.owner === owner ? this.served.line : this.lines.get(owner);
    if (!line) this.lines.set(owner, (line = []));
    line.push(item);
    this.count++;
  }

  /** The oldest item of the owner whose turn it is; the turn passes on. */
  shift(): T | undefined {
    if (this.served) {
      if (this.served.line.length > 0) this.lines.set(this.served.owner, this.served.line);
      this.served = null;
    }
    const next = this.lines.entries().next();
    if (next.done) return undefined;
    const [owner, line] = next.value;
    this.lines.delete(owner);
    this.served = { owner, line };
    this.count--;
    return line.shift();
  }

  /** Takes `item` out of its owner's line (given up while waiting); false when it is not there. */
  remove(owner: number, item: T): boolean {
    const line = this.served?.owner === owner ? this.served.line : this.lines.get(owner);
    const i = line ? line.indexOf(item) : -1;
    if (i < 0) return false;
    line!.splice(i, 1);
    this.count--;
    if (line!.length === 0 && this.lines.get(owner) === line) this.lines.delete(owner);
    return true;
  }

  /** Empties the queue; returns what was waiting, owner by owner. */
  clear(): T[] {
    const all = [...(this.served?.line ?? []), ...[...this.lines.values()].flat()];
    this.lines.clear();
    this.served = null;
    this.count = 0;
    return all;
  }
}
