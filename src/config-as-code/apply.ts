import { CONFIG_KINDS, CONFIG_SPECS, type ConfigKind } from "../domain/config-file-schema.ts";
import { ApiCallError, type ApiClient } from "./api-client.ts";
import type { CurrentState } from "./current-state.ts";
import { changeLine, type Change } from "./plan.ts";

/** A write the API refused half-way: which change, and the API's answer. */
export class ApplyError extends Error {}

/**
 * Runs the planned changes through the API in order, printing each line once it is done. Keys are
 * turned into ids as they become known: a monitor created a moment ago is named by the window
 * created after it.
 */
export async function applyChanges(api: ApiClient, changes: Change[], current: CurrentState, out: (line: string) => void): Promise<void> {
  const ids = Object.fromEntries(CONFIG_KINDS.map((k) => [k, new Map([...current.entries[k]].map(([key, e]) => [key, e.id]))])) as Record<ConfigKind, Map<string, number>>;
  for (const c of changes) {
    const path = CONFIG_SPECS[c.kind].path;
    const line = changeLine(c, current);
    try {
      if (c.op === "create") ids[c.kind].set(c.key, (await api.create(path, apiBody(c, ids))).id);
      else if (c.op === "update") await api.update(path, c.id!, apiBody(c, ids));
      else await api.remove(path, c.id!);
    } catch (e) {
      if (!(e instanceof ApiCallError)) throw e;
      const details = e.details ? `: ${Object.entries(e.details).map(([f, ms]) => `${fileName(c.kind, f)} ${ms.join("; ")}`).join("; ")}` : "";
      throw new ApplyError(`${line.slice(2)} failed: the API answered ${e.status} ${e.code}, ${e.message}${details}`);
    }
    out(line);
  }
}

/** The attribute's name in a file: a reference's, for an id list the API names. */
function fileName(kind: ConfigKind, apiName: string): string {
  return CONFIG_SPECS[kind].references.find((r) => r.api === apiName)?.file ?? apiName;
}

function apiBody(c: Change, ids: Record<ConfigKind, Map<string, number>>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(c.send)) {
    const r = CONFIG_SPECS[c.kind].references.find((x) => x.file === name);
    if (!r) {
      body[name] = value;
      continue;
    }
    const idOf = (key: string) => {
      const id = ids[r.kind].get(key);
      if (id === undefined) throw new ApplyError(`${CONFIG_SPECS[c.kind].label} ${c.key}: ${name} names ${key}, which does not exist yet`);
      return id;
    };
    body[r.api] = value === null ? null : Array.isArray(value) ? value.map((k) => idOf(k as string)) : idOf(value as string);
  }
  return body;
}
