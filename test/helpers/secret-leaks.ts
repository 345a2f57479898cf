/**
 * Whether a secret shows anywhere in what a probe returned: whole, URL-encoded, JSON-escaped, or
 * any 8 characters of it in a row (a quote cut short still leaks its start).
 */
export function secretLeaks(values: unknown[], secret: string): string[] {
  const texts = values.map((v) => JSON.stringify(v));
  // raw strings too: JSON escapes a quote inside the secret, which hides a raw copy from the search
  for (const v of values) if (v && typeof v === "object") for (const f of Object.values(v)) if (typeof f === "string") texts.push(f);
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  for (let i = 0; i + 8 <= secret.length; i++) forms.add(secret.slice(i, i + 8));
  const found: string[] = [];
  for (const form of forms) if (texts.some((t) => t.includes(form))) found.push(form);
  return found;
}
