/**
 * A LIKE pattern matching `text` anywhere, lower-cased for comparison with lower(column), with the
 * wildcards escaped by backslash (the query says `escape '\'`), so a search for "50%" means "50%".
 */
export function likeContains(text: string): string {
  return "%" + text.toLowerCase().replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}
