/** Which page of a list: how many records, after how many (docs/api-rules.md "Paging and sorting"). */
export interface PageWindow {
  limit: number;
  offset: number;
}
