/**
 * A binary min-heap of items that know their own position, so one item's key can change or the item
 * can leave in O(log n): the scheduler moves a monitor's next run on every PATCH, re-check and run.
 */
export interface HeapItem {
  /** the ordering key (for the scheduler: epoch ms when the item is due) */
  key: number;
  /** position in the heap array, -1 when not in the heap; owned by the heap */
  heapIndex: number;
}

export class MinHeap<T extends HeapItem> {
  private items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.items[item.heapIndex] === item;
  }

  push(item: T): void {
    if (this.has(item)) throw new Error("item is already in the heap");
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top) this.remove(top);
    return top;
  }

  remove(item: T): void {
    if (!this.has(item)) return;
    const i = item.heapIndex;
    const last = this.items.pop()!;
    if (last !== item) {
      this.items[i] = last;
      last.heapIndex = i;
      this.down(i);
      this.up(last.heapIndex);
    }
    item.heapIndex = -1;
  }

  /** Changes an item's key, inserting it if it was not in the heap. */
  update(item: T, key: number): void {
    item.key = key;
    if (!this.has(item)) return this.push(item);
    this.up(item.heapIndex);
    this.down(item.heapIndex);
  }

  private up(i: number): void {
    const items = this.items;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.key <= items[i]!.key) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < n && items[l]!.key < items[min]!.key) min = l;
      if (r < n && items[r]!.key < items[min]!.key) min = r;
      if (min === i) return;
      this.swap(i, min);
      i = min;
    }
  }

  private swap(a: number, b: number): void {
    const items = this.items;
    const t = items[a]!;
    items[a] = items[b]!;
    items[b] = t;
    items[a]!.heapIndex = a;
    items[b]!.heapIndex = b;
  }
}
