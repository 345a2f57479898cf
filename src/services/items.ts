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

/** Which page of a list: how many records, after how many. */
export interface PageWindow {
  limit: number;
  offset: number;
}
