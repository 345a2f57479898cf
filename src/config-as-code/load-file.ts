/**
 * Reads a configuration file into the resources it wants (docs/configuration-as-code.md), or fails
 * naming the line and field of every problem: the file's shape, references between its entries,
 * unset `${ENV_NAME}` variables, and each entry checked by the API's own validation functions, so
 * a file that loads is one the API takes, store checks aside (a slug another account uses).
 */
import { CONFIG_KINDS, CONFIG_SPECS, type ConfigKind, type ConfigReference } from "../domain/config-file-schema.ts";
import { validateGroupWrite } from "../domain/group-schema.ts";
import { validateWindowWrite } from "../domain/maintenance-window-validation.ts";
import { validateMonitorWrite } from "../domain/monitor-validation.ts";
import { validateChannelWrite } from "../domain/notification-channel-validation.ts";
import { validateStatusPageWrite } from "../domain/status-page-schema.ts";
import { resolvePlaceholders, type Env } from "./env-placeholders.ts";
import { ConfigFileError, parseYamlSource, type FileProblem, type YamlSource } from "./yaml-source.ts";

export interface DesiredEntry {
  kind: ConfigKind;
  key: string;
  /** the file's attributes, placeholders resolved, references by key */
  attributes: Record<string, unknown>;
  /** the attributes as the API stores them (its validator's normalised values and defaults), references left out */
  normal: Record<string, unknown>;
  /**
   * secrets whose variables are not set, with those variables: left out of `attributes` and
   * `normal`, fine as long as apply need not send them (plan.ts)
   */
  unresolved: Map<string, string[]>;
  /** the line of one of its attributes in the file, or of the entry's key */
  lineOf(field?: string): number;
}

export type DesiredState = Record<ConfigKind, Map<string, DesiredEntry>>;

type Validator = (input: Record<string, unknown>) => { changes: object; details: Record<string, string[]> };

/** The API's validation of a create, per kind. */
export const CREATE_VALIDATORS: Record<ConfigKind, Validator> = {
  groups: (i) => validateGroupWrite(i, true),
  notification_channels: (i) => validateChannelWrite(i),
  monitors: (i) => validateMonitorWrite(i),
  maintenance_windows: (i) => validateWindowWrite(i),
  // the instance's own host names are known to the server only; it refuses them at write time
  status_pages: (i) => validateStatusPageWrite(i, { ownHostNames: [] }),
};

const isMapping = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

export function emptyState(): DesiredState {
  return Object.fromEntries(CONFIG_KINDS.map((k) => [k, new Map()])) as DesiredState;
}

export function loadConfigFile(text: string, file: string, env: Env): DesiredState {
  const { source, problems } = parseYamlSource(text);
  if (!source) throw new ConfigFileError(file, problems);
  const state = readState(source, problems, env);
  if (problems.length) throw new ConfigFileError(file, problems.sort((a, b) => a.line - b.line));
  return state;
}

function readState(source: YamlSource, problems: FileProblem[], env: Env): DesiredState {
  const add = (path: (string | number)[], message: string) => problems.push({ line: source.lineOf(path), field: path.join("."), message });
  const state = emptyState();
  const data = source.data ?? {};
  if (!isMapping(data)) {
    add([], "must be a mapping of sections: version, " + CONFIG_KINDS.join(", "));
    return state;
  }
  const sections: Partial<Record<ConfigKind, Record<string, unknown>>> = {};
  for (const [name, value] of Object.entries(data)) {
    if (name === "version") {
      if (value !== 1) add([name], "must be 1");
    } else if (!(CONFIG_KINDS as readonly string[]).includes(name)) {
      add([name], `is not a section of a configuration file; the sections are version, ${CONFIG_KINDS.join(", ")}`);
    } else if (value !== null && !isMapping(value)) {
      add([name], `must be a mapping of ${CONFIG_SPECS[name as ConfigKind].label}s by external_id`);
    } else sections[name as ConfigKind] = (value ?? {}) as Record<string, unknown>;
  }
  const keys = Object.fromEntries(CONFIG_KINDS.map((k) => [k, Object.keys(sections[k] ?? {})])) as Record<ConfigKind, string[]>;
  for (const kind of CONFIG_KINDS) {
    for (const [key, entry] of Object.entries(sections[kind] ?? {})) {
      const loaded = readEntry(kind, key, entry, keys, env, add, (field) => source.lineOf(field === undefined ? [kind, key] : [kind, key, field]));
      if (loaded) state[kind].set(key, loaded);
    }
  }
  dependencyCycles(state, add);
  uniqueWithin(state, "groups", "name", "group names are unique within the account", add);
  uniqueWithin(state, "status_pages", "slug", "slugs are unique across the instance", add);
  uniqueWithin(state, "status_pages", "custom_domain", "a custom domain serves one page", add);
  return state;
}

type Add = (path: (string | number)[], message: string) => void;

function readEntry(kind: ConfigKind, key: string, entry: unknown, keys: Record<ConfigKind, string[]>, env: Env, add: Add, lineOf: DesiredEntry["lineOf"]): DesiredEntry | null {
  const spec = CONFIG_SPECS[kind];
  const at = (field?: string) => (field === undefined ? [kind, key] : [kind, key, field]);
  if (key.length > 200) add(at(), "is too long for an external_id (at most 200 characters)");
  if (!isMapping(entry)) {
    add(at(), `must be a mapping of the ${spec.label}'s attributes`);
    return null;
  }
  // a field with a problem of its own is not judged again by the API's validator
  const failed = new Set<string>();
  const fail = (field: string, message: string) => {
    add(at(field), message);
    failed.add(field);
  };
  const attributes: Record<string, unknown> = {};
  const input: Record<string, unknown> = {};
  const unresolved = new Map<string, string[]>();
  for (const [field, raw] of Object.entries(entry)) {
    if (!spec.attributes.includes(field)) {
      fail(field, unknownMessage(kind, field));
      continue;
    }
    const missing: string[] = [];
    const value = resolvePlaceholders(raw, env, (name) => missing.push(name));
    // a secret is sent only on create or when asked: its variable is needed then only (plan.ts)
    if (missing.length && spec.secrets.includes(field)) {
      unresolved.set(field, missing);
      continue;
    }
    for (const name of missing) fail(field, unsetMessage(name));
    attributes[field] = value;
    const r = spec.references.find((x) => x.file === field);
    if (r) {
      const ids = referenceIds(r, value, keys, (m) => fail(field, m));
      if (ids !== undefined) input[r.api] = ids;
    } else input[field] = value;
  }
  // the many references are lists in the file too: left out means none (not the API's defaults on create)
  for (const r of spec.references) if (r.many && !(r.file in attributes) && !spec.required.includes(r.file)) input[r.api] = [];
  const { changes, details } = CREATE_VALIDATORS[kind](input);
  let ok = failed.size === 0;
  for (const [apiName, messages] of Object.entries(details)) {
    const field = spec.references.find((x) => x.api === apiName)?.file ?? apiName;
    // a secret left out for its unset variable is not judged (such as "is required")
    if (failed.has(field) || unresolved.has(field)) continue;
    for (const m of messages) add(at(field), m);
    ok = false;
  }
  if (!ok) return null;
  // what the file does not hold (external_id, references by id, is_in_maintenance) is not compared either
  const normal = Object.fromEntries(Object.entries(changes).filter(([n]) => spec.attributes.includes(n)));
  // a window is one kind or the other: what the file leaves out of the other kind is null, so a change of kind clears it
  if (kind === "maintenance_windows") for (const n of ["starts_at", "ends_at", "schedule", "duration_sec"]) normal[n] ??= null;
  for (const field of unresolved.keys()) delete normal[field];
  return { kind, key, attributes, normal, unresolved, lineOf };
}

export const unsetMessage = (name: string) => `needs the environment variable ${name}, which is not set`;

function unknownMessage(kind: ConfigKind, field: string): string {
  const spec = CONFIG_SPECS[kind];
  const r = spec.references.find((x) => x.api === field);
  if (r) return `is not used in a configuration file: name the ${CONFIG_SPECS[r.kind].label}s by key with "${r.file}"`;
  if (field === "external_id") return "is the entry's key in a configuration file; leave it out";
  if (field === "is_in_maintenance") return "is not part of a configuration file: maintenance_windows say when monitors are in maintenance";
  return `is not a ${spec.label} attribute of a configuration file (see /api/v1/config-schema.json)`;
}

/**
 * Ids standing for the referenced keys while the API's validator checks the entry (the i-th key of
 * a kind is i + 1); undefined, after `fail`, when the value is not a reference to this file's entries.
 */
function referenceIds(r: ConfigReference, value: unknown, keys: Record<ConfigKind, string[]>, fail: (m: string) => void): number | number[] | null | undefined {
  const label = CONFIG_SPECS[r.kind].label;
  const idOf = (k: unknown): number | undefined => {
    const i = typeof k === "string" ? keys[r.kind].indexOf(k) : -1;
    if (i < 0) fail(typeof k === "string" ? `names no ${label} of this file: "${k}"` : `must name ${label}s of this file by key (strings)`);
    return i < 0 ? undefined : i + 1;
  };
  if (!r.many) {
    if (value === null) return null;
    return idOf(value);
  }
  if (!Array.isArray(value)) {
    fail(`must be a list of ${label}s of this file, by key`);
    return undefined;
  }
  if (new Set(value).size !== value.length) {
    fail(`must not name a ${label} twice`);
    return undefined;
  }
  const ids = value.map(idOf);
  return ids.some((i) => i === undefined) ? undefined : (ids as number[]);
}

/** Monitors depending on each other in a circle: the API refuses the last link, so the file is refused whole. */
function dependencyCycles(state: DesiredState, add: Add): void {
  const monitors = state.monitors;
  const deps = (k: string) => ((monitors.get(k)?.attributes.depends_on as string[] | undefined) ?? []).filter((d) => monitors.has(d));
  const done = new Set<string>();
  const visit = (k: string, path: string[]): void => {
    if (done.has(k)) return;
    const i = path.indexOf(k);
    if (i >= 0) {
      const cycle = [...path.slice(i), k];
      add(["monitors", path[path.length - 1]!, "depends_on"], k === path[path.length - 1] ? "cannot include the monitor itself" : `would make a dependency cycle: ${cycle.join(" → ")} (each monitor depends on the next)`);
      return;
    }
    for (const d of deps(k)) visit(d, [...path, k]);
    done.add(k);
  };
  for (const k of monitors.keys()) visit(k, []);
}

function uniqueWithin(state: DesiredState, kind: ConfigKind, field: string, why: string, add: Add): void {
  const seen = new Map<unknown, string>();
  for (const [key, e] of state[kind]) {
    const v = e.normal[field];
    if (v === null || v === undefined) continue;
    const other = seen.get(v);
    if (other !== undefined) add([kind, key, field], `is also ${CONFIG_SPECS[kind].label} "${other}"'s; ${why}`);
    else seen.set(v, key);
  }
}
