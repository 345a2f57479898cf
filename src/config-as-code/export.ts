/**
 * An account as a configuration file (docs/configuration-as-code.md): every resource under its key,
 * the attributes that differ from the API's defaults, references by key, and each secret the API
 * keeps as a `${ENV_NAME}` placeholder, since the API never returns one.
 */
import { Document, type YAMLMap } from "yaml";
import { CONFIG_KINDS, CONFIG_SCHEMA_PATH, CONFIG_SPECS, type ConfigKind } from "../domain/config-file-schema.ts";
import { CHANNEL_FIELDS, type ChannelAttributeName, type ChannelField, type ChannelType } from "../domain/notification-channel-schema.ts";
import { URL_MASK } from "../domain/url-mask.ts";
import type { CurrentEntry, CurrentState } from "./current-state.ts";
import { escapePlaceholders, secretVariable } from "./env-placeholders.ts";
import { CREATE_VALIDATORS } from "./load-file.ts";

/** The secret an http monitor's api_auth_type sends. */
const AUTH_SECRET: Record<string, string> = { bearer: "api_auth_bearer_token", basic: "api_auth_basic_pass", api_key: "api_auth_api_key_value" };

interface Exported {
  text: string;
  /** the variables the file's placeholders name */
  variables: string[];
}

export function exportYaml(current: CurrentState, server: string): Exported {
  const data: Record<string, unknown> = { version: 1 };
  const hints: { path: string[]; text: string }[] = [];
  const variables: string[] = [];
  const placeholder = (kind: ConfigKind, key: string, field: string) => {
    let name = secretVariable(CONFIG_SPECS[kind].keyPrefix, key, field);
    for (let i = 2; variables.includes(name); i++) name = `${secretVariable(CONFIG_SPECS[kind].keyPrefix, key, field)}_${i}`;
    variables.push(name);
    return `\${${name}}`;
  };
  for (const kind of CONFIG_KINDS) {
    const section: Record<string, unknown> = {};
    const resources = [...current.entries[kind].values()].sort((a, b) => a.id - b.id);
    for (const e of resources) {
      const { entry, optionalSecrets } = exportEntry(e, current, placeholder);
      section[e.key] = entry;
      if (optionalSecrets.length) {
        const lines = optionalSecrets.map((s) => `${s}: \${${secretVariable(CONFIG_SPECS[kind].keyPrefix, e.key, s)}}`);
        hints.push({ path: [kind, e.key], text: ` if it has one (the API does not say): ${lines.join(", ")}` });
      }
    }
    if (resources.length) data[kind] = section;
  }
  const doc = new Document(data);
  for (const h of hints) (doc.getIn(h.path, true) as YAMLMap).comment = h.text;
  const header = [
    `# yaml-language-server: $schema=${server.replace(/\/+$/, "")}${CONFIG_SCHEMA_PATH}`,
    "# vigil export: apply with vigil apply -f FILE (docs/configuration-as-code.md)",
    ...(variables.length ? ["# Secrets come from the environment: " + variables.join(", ")] : []),
  ];
  return { text: header.join("\n") + "\n" + doc.toString({ lineWidth: 0 }), variables };
}

/** The attributes an entry of a kind has when left out of the file. */
function defaultsOf(kind: ConfigKind, type: unknown): Record<string, unknown> {
  const typeAttr = CONFIG_SPECS[kind].typeAttribute;
  return CREATE_VALIDATORS[kind](typeAttr ? { [typeAttr]: type } : {}).changes as Record<string, unknown>;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function exportEntry(e: CurrentEntry, current: CurrentState, placeholder: (kind: ConfigKind, key: string, field: string) => string) {
  const spec = CONFIG_SPECS[e.kind];
  const a = e.attributes;
  const defaults = defaultsOf(e.kind, spec.typeAttribute ? a[spec.typeAttribute] : undefined);
  const entry: Record<string, unknown> = {};
  const optionalSecrets: string[] = [];
  for (const n of spec.attributes) {
    const r = spec.references.find((x) => x.file === n);
    if (r) {
      const ids = a[r.api];
      const keys = (Array.isArray(ids) ? ids : ids === null || ids === undefined ? [] : [ids]).map((id) => current.keyOf[r.kind].get(id as number)).filter((k): k is string => k !== undefined);
      if (keys.length) entry[n] = r.many ? keys : keys[0];
      continue;
    }
    if (spec.secrets.includes(n)) {
      const secret = secretOf(e, n);
      if (secret === "known") entry[n] = placeholder(e.kind, e.key, n);
      else if (secret === "maybe") optionalSecrets.push(n);
      else if (n === "url" && a.url !== null && a.url !== undefined) entry[n] = escapePlaceholders(a.url);
      continue;
    }
    if (!(n in a)) continue;
    const v = a[n];
    if (!spec.required.includes(n) && (n in defaults ? same(v, defaults[n]) : v === null)) continue;
    entry[n] = escapePlaceholders(v);
  }
  return { entry, optionalSecrets };
}

/**
 * Whether a secret is there: "known" when the API requires it (the selected auth secret, a
 * channel type's required secret, a masked url), "maybe" when it is optional and the API does not
 * say, "no" otherwise.
 */
function secretOf(e: CurrentEntry, name: string): "known" | "maybe" | "no" {
  const a = e.attributes;
  if (e.kind === "monitors") {
    if (name === "db_password") return ["postgres", "mysql", "redis"].includes(a.monitor_type as string) ? "maybe" : "no";
    return a.monitor_type === "http" && AUTH_SECRET[a.api_auth_type as string] === name ? "known" : "no";
  }
  if (name === "url") return typeof a.url === "string" && a.url.includes(URL_MASK) ? "known" : "no";
  const field = CHANNEL_FIELDS[name as ChannelAttributeName] as ChannelField;
  const type = a.channel_type as ChannelType;
  if (field.types !== "all" && !(field.types as readonly string[]).includes(type)) return "no";
  return field.requiredFor?.includes(type) ? "known" : "maybe";
}
