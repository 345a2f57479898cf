/**
 * What apply changes (docs/configuration-as-code.md "Plan, prune and idempotence"): each entry of
 * the file is matched to the account's resource of the same key; a new one is created, a matched
 * one updated with only the attributes that differ (none: no write at all), and with --prune a
 * resource the file lacks is deleted. Creates and updates go in dependency order, deletes in reverse.
 */
import { CONFIG_KINDS, CONFIG_SPECS, type ConfigKind } from "../domain/config-file-schema.ts";
import { AUTH_SECRET_ATTRIBUTES } from "../domain/monitor-schema.ts";
import { databaseOrigin, newOrigins } from "../domain/secret-origins.ts";
import { maskedUrl, URL_MASK } from "../domain/url-mask.ts";
import type { CurrentEntry, CurrentState } from "./current-state.ts";
import { CREATE_VALIDATORS, unsetMessage, type DesiredEntry, type DesiredState } from "./load-file.ts";
import { ConfigFileError, type FileProblem } from "./yaml-source.ts";

export interface Change {
  op: "create" | "update" | "delete";
  kind: ConfigKind;
  key: string;
  /** the resource updated or deleted */
  id: number | null;
  /** the attributes a create or update sends, by their file names (references by key) */
  send: Record<string, unknown>;
}

export interface PlanOptions {
  /** the file's name, for problems found against the account */
  file: string;
  prune: boolean;
  /** send every secret the file holds (docs/configuration-as-code.md "Rotating a secret") */
  sendSecrets: boolean;
}

/** `~ update monitor api: interval_sec, group` */
export function changeLine(c: Change, current: CurrentState): string {
  const label = CONFIG_SPECS[c.kind].label;
  if (c.op === "create") return `+ create ${label} ${c.key}`;
  if (c.op === "update") return `~ update ${label} ${c.key}: ${Object.keys(c.send).join(", ")}`;
  const name = [...current.entries[c.kind].values(), ...current.unnamed[c.kind]].find((e) => e.id === c.id)?.attributes.name;
  return `- delete ${label} ${c.key}${typeof name === "string" ? ` (${name})` : ""}`;
}

export function planChanges(desired: DesiredState, current: CurrentState, opts: PlanOptions): Change[] {
  const problems: FileProblem[] = [];
  const changes: Change[] = [];
  for (const kind of CONFIG_KINDS) {
    for (const key of creationOrder(kind, desired)) {
      const want = desired[kind].get(key)!;
      const have = current.entries[kind].get(key);
      if (!have) {
        for (const field of want.unresolved.keys()) problems.push(unsetProblem(want, field));
        const masked = kind === "notification_channels" && typeof want.attributes.url === "string" && want.attributes.url.endsWith(`/${URL_MASK}`);
        if (masked) problems.push({ line: want.lineOf("url"), field: `${kind}.${key}.url`, message: `is a URL as the API shows it, its path hidden: a new channel needs the whole URL (or a \${VARIABLE} holding it)` });
        changes.push({ op: "create", kind, key, id: null, send: createBody(want) });
        continue;
      }
      const typeAttr = CONFIG_SPECS[kind].typeAttribute;
      if (typeAttr && have.attributes[typeAttr] !== want.normal[typeAttr]) {
        problems.push({ line: want.lineOf(typeAttr), field: `${kind}.${key}.${typeAttr}`, message: `cannot change: the ${CONFIG_SPECS[kind].label} is ${String(have.attributes[typeAttr])} (give the entry another key to have a new one created, and --prune to delete this one)` });
        continue;
      }
      const send = updateBody(want, have, current, opts, problems);
      if (Object.keys(send).length) changes.push({ op: "update", kind, key, id: have.id, send });
    }
  }
  if (problems.length) throw new ConfigFileError(opts.file, problems.sort((a, b) => a.line - b.line));
  if (opts.prune) {
    for (const kind of [...CONFIG_KINDS].reverse()) {
      const gone = [...current.entries[kind].values(), ...current.unnamed[kind]].filter((e) => !desired[kind].has(e.key) || current.entries[kind].get(e.key) !== e);
      for (const e of deletionOrder(kind, gone)) changes.push({ op: "delete", kind, key: e.key, id: e.id, send: {} });
    }
  }
  return changes;
}

/** The file's order, except that a monitor comes after the monitors it depends on. */
function creationOrder(kind: ConfigKind, desired: DesiredState): string[] {
  const keys = [...desired[kind].keys()];
  if (kind !== "monitors") return keys;
  const out: string[] = [];
  const placed = new Set<string>();
  const place = (k: string) => {
    if (placed.has(k)) return;
    placed.add(k); // the loader refused cycles
    for (const d of (desired.monitors.get(k)!.attributes.depends_on as string[] | undefined) ?? []) place(d);
    out.push(k);
  };
  keys.forEach(place);
  return out;
}

/** Monitors that others depend on go last. */
function deletionOrder(kind: ConfigKind, gone: CurrentEntry[]): CurrentEntry[] {
  if (kind !== "monitors") return gone;
  const byId = new Map(gone.map((e) => [e.id, e]));
  const out: CurrentEntry[] = [];
  const placed = new Set<number>();
  const place = (e: CurrentEntry, path: Set<number>) => {
    if (placed.has(e.id) || path.has(e.id)) return;
    path.add(e.id);
    for (const other of gone) if (((other.attributes.depends_on_ids as number[]) ?? []).includes(e.id)) place(other, path);
    placed.add(e.id);
    out.push(e);
  };
  for (const e of byId.values()) place(e, new Set());
  return out;
}

function createBody(want: DesiredEntry): Record<string, unknown> {
  const send: Record<string, unknown> = { ...want.attributes, external_id: want.key };
  for (const r of CONFIG_SPECS[want.kind].references) if (!(r.file in send)) send[r.file] = r.many ? [] : null;
  return send;
}

/** Values compared as JSON with object keys sorted: a header map read back in another order is the same. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x !== null && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x));
}

/** The stored resource's attributes, normalised by the same validator as the file's. */
function normalOf(have: CurrentEntry, names: Iterable<string>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const typeAttr = CONFIG_SPECS[have.kind].typeAttribute;
  if (typeAttr) input[typeAttr] = have.attributes[typeAttr];
  for (const n of names) if (n in have.attributes) input[n] = have.attributes[n];
  return CREATE_VALIDATORS[have.kind](input).changes as Record<string, unknown>;
}

/** A secret apply must send whose variable is not set: the loader let it through, as it was not known then. */
function unsetProblem(want: DesiredEntry, field: string): FileProblem {
  return { line: want.lineOf(field), field: `${want.kind}.${want.key}.${field}`, message: want.unresolved.get(field)!.map(unsetMessage).join("; ") };
}

/** Puts each secret of `names` the file holds into `send`, or a problem where its variable is not set. */
function sendSecrets(want: DesiredEntry, names: readonly string[], send: Record<string, unknown>, problems: FileProblem[]): void {
  for (const s of names) {
    if (want.unresolved.has(s)) problems.push(unsetProblem(want, s));
    else if (s in want.attributes) send[s] = want.attributes[s];
  }
}

function updateBody(want: DesiredEntry, have: CurrentEntry, current: CurrentState, opts: PlanOptions, problems: FileProblem[]): Record<string, unknown> {
  const spec = CONFIG_SPECS[want.kind];
  const send: Record<string, unknown> = {};
  const compared = Object.keys(want.normal).filter((n) => n !== spec.typeAttribute && !spec.secrets.includes(n) && !(want.kind === "status_pages" && n === "access_token" && !("access_token" in want.attributes)));
  const haveNormal = normalOf(have, compared);
  for (const n of compared) {
    if (canonical(want.normal[n]) !== canonical(haveNormal[n])) send[n] = n in want.attributes ? want.attributes[n] : want.normal[n];
  }
  for (const r of spec.references) {
    const wanted = want.attributes[r.file] ?? (r.many ? [] : null);
    const ids = have.attributes[r.api];
    const had = Array.isArray(ids) ? ids.map((id) => current.keyOf[r.kind].get(id) ?? `#${id}`) : typeof ids === "number" ? (current.keyOf[r.kind].get(ids) ?? `#${ids}`) : null;
    const same = r.many && !r.ordered ? canonical([...(wanted as string[])].sort()) === canonical([...(had as string[])].sort()) : canonical(wanted) === canonical(had);
    if (!same) send[r.file] = wanted;
  }
  if (want.kind === "notification_channels") channelSecrets(want, have, send, opts, problems);
  if (want.kind === "monitors") monitorSecrets(want, have, send, opts, problems);
  return send;
}

/**
 * The API reads a channel's url back as scheme and host only: it is sent when that part differs
 * (or it is set or removed), the rest of a channel's secrets only on create or with --send-secrets.
 * A url whose variable is not set is left as stored, as the other secrets are.
 */
function channelSecrets(want: DesiredEntry, have: CurrentEntry, send: Record<string, unknown>, opts: PlanOptions, problems: FileProblem[]): void {
  if (opts.sendSecrets) return sendSecrets(want, CONFIG_SPECS.notification_channels.secrets, send, problems);
  if (want.unresolved.has("url")) return;
  const url = (want.normal.url as string | null | undefined) ?? null;
  const shown = (have.attributes.url as string | null | undefined) ?? null;
  if ((url === null) !== (shown === null) || (url !== null && maskedUrl(url) !== shown)) send.url = url;
}

/**
 * A monitor's secrets go with a create, and again whenever the API requires them (docs/monitors.md
 * "Authentication secrets"): the http target's origin (or a step's) changes, api_auth_type changes,
 * or a database target moves to another host or port; with --send-secrets always.
 */
const DATABASE_TYPES = ["postgres", "mysql", "redis"];

function monitorSecrets(want: DesiredEntry, have: CurrentEntry, send: Record<string, unknown>, opts: PlanOptions, problems: FileProblem[]): void {
  if (opts.sendSecrets) return sendSecrets(want, CONFIG_SPECS.monitors.secrets, send, problems);
  const merged = { ...have.attributes, ...want.normal };
  if (want.normal.monitor_type === "http" && (newOrigins(have.attributes, merged).length > 0 || "api_auth_type" in send)) {
    sendSecrets(want, AUTH_SECRET_ATTRIBUTES, send, problems);
  }
  if (DATABASE_TYPES.includes(want.normal.monitor_type as string)) {
    const before = databaseOrigin(have.attributes.target);
    const after = databaseOrigin(want.normal.target);
    if (after !== null && after !== before) {
      if (want.unresolved.has("db_password")) problems.push(unsetProblem(want, "db_password"));
      else send.db_password = want.attributes.db_password ?? null;
    }
  }
}
