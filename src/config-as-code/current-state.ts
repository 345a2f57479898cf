import { CONFIG_KINDS, CONFIG_SPECS, type ConfigKind } from "../domain/config-file-schema.ts";
import type { ApiClient, ApiRecord } from "./api-client.ts";

/** A resource of the account, under the key a file names it by. */
export interface CurrentEntry {
  kind: ConfigKind;
  key: string;
  id: number;
  attributes: Record<string, unknown>;
}

export interface CurrentState {
  entries: Record<ConfigKind, Map<string, CurrentEntry>>;
  /** id → key, for the references between resources */
  keyOf: Record<ConfigKind, Map<number, string>>;
  /** resources no key names (see keyed): only --prune touches them */
  unnamed: Record<ConfigKind, CurrentEntry[]>;
}

/**
 * The key of a resource without an external_id (docs/configuration-as-code.md "Matching"): its
 * kind and id, `monitor-42`. The id never changes, so the key survives renames, and export and the
 * next apply agree on it without writing anything.
 */
export function implicitKey(kind: ConfigKind, id: number): string {
  return `${CONFIG_SPECS[kind].keyPrefix}-${id}`;
}

/** Every resource of the account the token belongs to, keyed: its external_id, else its implicit key. */
export async function readAccount(api: ApiClient): Promise<CurrentState> {
  const lists = await Promise.all(CONFIG_KINDS.map((k) => api.list(CONFIG_SPECS[k].path)));
  const entries = {} as CurrentState["entries"];
  const keyOf = {} as CurrentState["keyOf"];
  const unnamed = {} as CurrentState["unnamed"];
  CONFIG_KINDS.forEach((kind, i) => {
    const { byKey, byId, rest } = keyed(kind, lists[i]!);
    entries[kind] = byKey;
    keyOf[kind] = byId;
    unnamed[kind] = rest.map((r) => ({ kind, key: implicitKey(kind, r.id), id: r.id, attributes: r.attributes }));
  });
  return { entries, keyOf, unnamed };
}

/**
 * Explicit external ids first; an implicit key another resource holds as its external_id is that
 * resource's, and the one without stays unnamed (a file cannot name it; --prune deletes it).
 */
function keyed(kind: ConfigKind, records: ApiRecord[]) {
  const byKey = new Map<string, CurrentEntry>();
  const byId = new Map<number, string>();
  const put = (r: ApiRecord, key: string) => {
    byKey.set(key, { kind, key, id: r.id, attributes: r.attributes });
    byId.set(r.id, key);
  };
  for (const r of records) if (typeof r.attributes.external_id === "string") put(r, r.attributes.external_id);
  for (const r of records) {
    if (typeof r.attributes.external_id === "string") continue;
    const key = implicitKey(kind, r.id);
    if (!byKey.has(key)) put(r, key);
  }
  return { byKey, byId, rest: records.filter((r) => !byId.has(r.id)) };
}
