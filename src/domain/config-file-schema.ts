/**
 * The configuration file of `vigil export` and `vigil apply` (docs/configuration-as-code.md): one
 * map per kind of resource, keyed by external_id, each entry the API's writable attributes with
 * references to other entries by key instead of numeric ids. Built from the same attribute
 * catalogues as the API, so the JSON Schema editors check the file against, the OpenAPI document
 * and the validation apply runs cannot drift apart.
 */
import { Type, type TSchema } from "@sinclair/typebox";
import { GROUP_FIELDS } from "./group-schema.ts";
import { WINDOW_ATTRIBUTE_NAMES, WINDOW_FIELDS } from "./maintenance-window-schema.ts";
import { MONITOR_ATTRIBUTE_NAMES, MONITOR_FIELDS } from "./monitor-schema.ts";
import { CHANNEL_ATTRIBUTE_NAMES, CHANNEL_FIELDS } from "./notification-channel-schema.ts";
import { STATUS_PAGE_FIELDS } from "./status-page-schema.ts";

/** Where an instance serves the file's JSON Schema, beside its OpenAPI document, without a token. */
export const CONFIG_SCHEMA_PATH = "/api/v1/config-schema.json";

/** The kinds, in the order apply creates them (and prunes them in reverse). */
export const CONFIG_KINDS = ["groups", "notification_channels", "monitors", "maintenance_windows", "status_pages"] as const;
export type ConfigKind = (typeof CONFIG_KINDS)[number];

/** A reference attribute: `file` names entries of `kind` by key where the API takes `api` ids. */
export interface ConfigReference {
  file: string;
  api: string;
  kind: ConfigKind;
  many: boolean;
  /** the order of the list means something (a status page's monitors) */
  ordered: boolean;
}

export interface ConfigKindSpec {
  /** the API's path under /api/v1 */
  path: string;
  /** a resource of this kind, in messages and change lines */
  label: string;
  /** attributes the file holds, in the order export writes them (references by file name) */
  attributes: readonly string[];
  /** required in every entry */
  required: readonly string[];
  references: readonly ConfigReference[];
  /** write-only attributes: never read back, given as ${ENV_NAME} placeholders */
  secrets: readonly string[];
  /** the type attribute that cannot change after creation */
  typeAttribute: string | null;
  /** prefix of the key export gives a resource without an external_id, and of its secrets' variables */
  keyPrefix: string;
}

const ref = (file: string, api: string, kind: ConfigKind, many: boolean, ordered = false): ConfigReference => ({ file, api, kind, many, ordered });

/**
 * What a file does not hold: the key says external_id; read-only attributes are the server's; a
 * monitor's is_in_maintenance also reads true while a window holds it, so the file's
 * maintenance_windows say maintenance instead.
 */
const NOT_IN_FILE = new Set(["external_id", "is_in_maintenance"]);

function fileAttributes(names: readonly string[], readOnly: (n: string) => boolean, refs: readonly ConfigReference[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    if (NOT_IN_FILE.has(n) || readOnly(n)) continue;
    const r = refs.find((x) => x.api === n);
    out.push(r ? r.file : n);
  }
  return out;
}

const MONITOR_REFS = [
  ref("group", "group_id", "groups", false),
  ref("notification_channels", "notification_channel_ids", "notification_channels", true),
  ref("depends_on", "depends_on_ids", "monitors", true),
  ref("escalation_channels", "escalation_channel_ids", "notification_channels", true),
];
const WINDOW_REFS = [ref("monitors", "monitor_ids", "monitors", true)];
const PAGE_REFS = [ref("monitors", "monitor_ids", "monitors", true, true)];

export const CONFIG_SPECS: Record<ConfigKind, ConfigKindSpec> = {
  groups: {
    path: "groups",
    label: "group",
    attributes: fileAttributes(Object.keys(GROUP_FIELDS), () => false, []),
    required: ["name"],
    references: [],
    secrets: [],
    typeAttribute: null,
    keyPrefix: "group",
  },
  notification_channels: {
    path: "notification-channels",
    label: "notification channel",
    attributes: fileAttributes(CHANNEL_ATTRIBUTE_NAMES, (n) => CHANNEL_FIELDS[n as keyof typeof CHANNEL_FIELDS].access === "ro", []),
    required: ["name", "channel_type"],
    references: [],
    // url is readable, but only as scheme and host: the rest is as secret as the others
    secrets: ["url", ...CHANNEL_ATTRIBUTE_NAMES.filter((n) => CHANNEL_FIELDS[n].access === "wo")],
    typeAttribute: "channel_type",
    keyPrefix: "channel",
  },
  monitors: {
    path: "monitors",
    label: "monitor",
    attributes: fileAttributes(MONITOR_ATTRIBUTE_NAMES, (n) => MONITOR_FIELDS[n as keyof typeof MONITOR_FIELDS].access === "ro", MONITOR_REFS),
    required: ["name", "monitor_type", "interval_sec", "timeout_ms"],
    references: MONITOR_REFS,
    secrets: MONITOR_ATTRIBUTE_NAMES.filter((n) => MONITOR_FIELDS[n].access === "wo"),
    typeAttribute: "monitor_type",
    keyPrefix: "monitor",
  },
  maintenance_windows: {
    path: "maintenance-windows",
    label: "maintenance window",
    attributes: fileAttributes(WINDOW_ATTRIBUTE_NAMES, (n) => WINDOW_FIELDS[n as keyof typeof WINDOW_FIELDS].readOnly, WINDOW_REFS),
    required: ["name", "monitors"],
    references: WINDOW_REFS,
    secrets: [],
    typeAttribute: null,
    keyPrefix: "window",
  },
  status_pages: {
    path: "status-pages",
    label: "status page",
    attributes: fileAttributes(Object.keys(STATUS_PAGE_FIELDS), () => false, PAGE_REFS),
    required: ["name"],
    references: PAGE_REFS,
    secrets: [],
    typeAttribute: null,
    keyPrefix: "page",
  },
};

/** The API's TypeBox schema of an attribute, by its API name. */
function apiSchema(kind: ConfigKind, name: string): TSchema {
  const catalogue: Record<string, { schema: TSchema }> = { groups: GROUP_FIELDS, notification_channels: CHANNEL_FIELDS, monitors: MONITOR_FIELDS, maintenance_windows: WINDOW_FIELDS, status_pages: STATUS_PAGE_FIELDS }[kind];
  return catalogue[name]!.schema;
}

const KEY = Type.String({ minLength: 1, maxLength: 200, description: "the external_id of an entry of this file" });

function referenceSchema(r: ConfigReference, apiField: TSchema): TSchema {
  const target = CONFIG_SPECS[r.kind].label;
  const description = `${target}s of this file, by key${r.ordered ? ", in this order" : ""}`;
  if (!r.many) return Type.Union([KEY, Type.Null()], { description: `a ${target} of this file, by key; null for none` });
  const { minItems, maxItems } = apiField as { minItems?: number; maxItems?: number };
  return Type.Array(KEY, { uniqueItems: true, description, ...(minItems !== undefined ? { minItems } : {}), ...(maxItems !== undefined ? { maxItems } : {}) });
}

/** One entry of a kind: its attributes with the API's schemas, references by key. */
function entrySchema(kind: ConfigKind): TSchema {
  const spec = CONFIG_SPECS[kind];
  const props: Record<string, TSchema> = {};
  for (const n of spec.attributes) {
    const r = spec.references.find((x) => x.file === n);
    const schema = r ? referenceSchema(r, apiSchema(kind, r.api)) : apiSchema(kind, n);
    props[n] = spec.required.includes(n) ? schema : Type.Optional(schema);
  }
  return Type.Object(props, { additionalProperties: false, description: `a ${spec.label}; the key is its external_id` });
}

/**
 * The JSON Schema (2020-12) of a configuration file, served at /api/v1/config-schema.json and kept
 * in docs/config-schema.json. `${ENV_NAME}` placeholders are strings, so they fit string attributes.
 */
export function configFileSchema(): TSchema {
  const sections: Record<string, TSchema> = {};
  for (const kind of CONFIG_KINDS) sections[kind] = Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 200 }), entrySchema(kind), { description: `${CONFIG_SPECS[kind].label}s by external_id` }));
  return Type.Object(
    { version: Type.Optional(Type.Literal(1, { description: "the format's version" })), ...sections },
    {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      title: "Vigil configuration file (vigil export, vigil apply)",
      description: "Monitors, groups, notification channels, maintenance windows and status pages of one account, keyed by external_id. Write-only secrets are ${ENV_NAME} placeholders read from the environment by vigil apply.",
      additionalProperties: false,
    },
  );
}

/** The schema as served and as docs/config-schema.json holds it (scripts/config-schema.ts writes that copy). */
export function configSchemaJson(): string {
  return JSON.stringify(configFileSchema(), null, 2) + "\n";
}
