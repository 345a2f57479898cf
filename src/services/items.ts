import type { PageWindow } from "../domain/page-window.ts";

/** One record as services return it: its id and its attributes as the API shows them. */
export interface Item<A> {
  id: number;
  attributes: A;
}

/** One page of a list, and how many records the whole list has. */
export interface Listed<A> {
  items: Item<A>[];
  total: number;
}

export type { PageWindow };

const PAGE = 100;

/**
 * Every record of a paged list, `PAGE` at a time and at most `maxPages` pages: the dashboard shows
 * its lists whole, within that bound.
 */
export async function allItems<A>(list: (window: PageWindow) => Promise<Listed<A>>, maxPages = 50): Promise<Item<A>[]> {
  const out: Item<A>[] = [];
  for (let page = 0; page < maxPages; page++) {
    const { items, total } = await list({ limit: PAGE, offset: page * PAGE });
    out.push(...items);
    if (out.length >= total || items.length === 0) break;
  }
  return out;
}
