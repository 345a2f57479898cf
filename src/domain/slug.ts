/**
 * Status page slugs (docs/api-rules.md "Status page attributes"): `^[a-z0-9]+(-[a-z0-9]+)*$`, at
 * most 64 characters, generated from the name when omitted, with -2, -3… on collision.
 */
export const SLUG_PATTERN = "^[a-z0-9]+(-[a-z0-9]+)*$";
export const SLUG_MAX = 64;
const SLUG_RE = new RegExp(SLUG_PATTERN);

export function isValidSlug(s: string): boolean {
  return s.length <= SLUG_MAX && SLUG_RE.test(s);
}

/**
 * "Acme Café — Status!" → "acme-cafe-status". Accents are folded to their base letters, every other
 * run of non-alphanumerics becomes one hyphen; a name with nothing usable gives "status".
 */
export function slugify(name: string, max = SLUG_MAX): string {
  const s = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return s.slice(0, max).replace(/-+$/, "") || "status";
}

/**
 * The first of base, base-2, base-3… not in `taken`; the base is shortened when needed so the
 * suffixed slug still fits in 64 characters. `limit` bounds the search.
 */
export function firstFreeSlug(base: string, taken: ReadonlySet<string>, limit = 10_000): string | null {
  if (!taken.has(base)) return base;
  for (let n = 2; n <= limit; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, "") + suffix;
    if (!taken.has(candidate)) return candidate;
  }
  return null;
}
