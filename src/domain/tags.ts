/**
 * Monitor tags (README "Groups, tags and status page updates"): up to 20 distinct tags of 1 to 50
 * characters, each letters, digits, spaces and `_ . : / -` ("env:prod", "team/web"). Spaces around a
 * tag are dropped; tags are compared exactly ("Prod" and "prod" are two tags).
 */
export const MAX_TAGS = 20;
export const TAG_MAX_LENGTH = 50;
/** Letters and digits of any script, with their combining marks. JSON Schema patterns are read with the u flag. */
export const TAG_PATTERN = `^[\\p{L}\\p{M}\\p{Nd} _.:/-]{1,${TAG_MAX_LENGTH}}$`;
const TAG = new RegExp(TAG_PATTERN, "u");

export const TAG_RULE = `1 to ${TAG_MAX_LENGTH} letters, digits, spaces and _ . : / -`;

/** Whether `text` is a tag as stored (already trimmed). */
export function isTag(text: string): boolean {
  return text === text.trim() && TAG.test(text);
}

/** The problems of a `tags` value from a request; none means normalTags(value) may be stored. */
export function tagsProblems(value: unknown): string[] {
  if (!Array.isArray(value) || !value.every((t) => typeof t === "string")) return [`must be a list of tags (strings of ${TAG_RULE})`];
  const problems: string[] = [];
  if (value.length > MAX_TAGS) problems.push(`must hold at most ${MAX_TAGS} tags (${value.length} given)`);
  const seen = new Set<string>();
  for (const raw of value as string[]) {
    const tag = raw.trim();
    if (!isTag(tag)) problems.push(`has "${raw.slice(0, 60)}", which is not a tag: a tag is ${TAG_RULE}`);
    else if (seen.has(tag)) problems.push(`has "${tag}" twice; tags must be distinct`);
    seen.add(tag);
  }
  return problems;
}

/** Trimmed, in code point order: how tags are stored and returned. */
export function normalTags(value: readonly string[]): string[] {
  return value.map((t) => t.trim()).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
