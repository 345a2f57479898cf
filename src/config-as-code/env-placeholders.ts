/**
 * `${ENV_NAME}` placeholders of a configuration file (docs/configuration-as-code.md "Secrets"):
 * replaced by the variable's value wherever they stand in a string; `$${` writes a literal `${`.
 */
const PLACEHOLDER = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export type Env = Record<string, string | undefined>;

/** `value` with every placeholder in its strings replaced; `missing` gets each unset variable. */
export function resolvePlaceholders(value: unknown, env: Env, missing: (name: string) => void): unknown {
  if (typeof value === "string") {
    return value.replace(PLACEHOLDER, (whole, escaped: string, name: string) => {
      if (escaped) return `\${${name}}`;
      const v = env[name];
      if (v === undefined) {
        missing(name);
        return whole;
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v) => resolvePlaceholders(v, env, missing));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolvePlaceholders(v, env, missing)]));
  return value;
}

/** A value written to a file: a literal `${` is escaped so apply does not read it as a placeholder. */
export function escapePlaceholders(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("${", "$${");
  if (Array.isArray(value)) return value.map(escapePlaceholders);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapePlaceholders(v)]));
  return value;
}

/** `${VIGIL_MONITOR_API_DB_PASSWORD}`: the variable export names for a secret of an entry. */
export function secretVariable(prefix: string, key: string, field: string): string {
  return `VIGIL_${prefix}_${key}_${field}`.toUpperCase().replace(/[^A-Z0-9_]+/g, "_").replace(/_+/g, "_");
}
