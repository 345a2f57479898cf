/**
 * Carries out an import plan through the services, as the API would (README "Coming from Uptime
 * Kuma"): the same validation, ownership checks and sealing of secrets. One line per item, created
 * or skipped with the reason, then the notices and a summary. `dryRun` writes nothing: each item is
 * checked by the same validators and the line says what would happen.
 *
 * A second run of the same source creates only what is missing: an item whose name the account
 * already has (per kind) is left as it is, and what refers to it is linked to the existing one.
 */
import type { AppContext } from "../context.ts";
import { validateGroupWrite } from "../domain/group-schema.ts";
import { validateMonitorWrite } from "../domain/monitor-validation.ts";
import { validateWindowWrite } from "../domain/maintenance-window-validation.ts";
import { validateChannelWrite } from "../domain/notification-channel-validation.ts";
import { validateStatusPageWrite } from "../domain/status-page-schema.ts";
import { ApiError } from "../http/errors.ts";
import type { Actor } from "../services/actor.ts";
import { createGroup } from "../services/groups.ts";
import { createMaintenanceWindow } from "../services/maintenance-windows.ts";
import { createMonitor } from "../services/monitors.ts";
import { createChannel } from "../services/notification-channels.ts";
import { createStatusPage } from "../services/status-pages.ts";
import { existingByName } from "../store/import-names.ts";
import { KIND_ORDER, type ImportKind, type ImportPlan, type PlannedItem } from "./plan.ts";

export interface ImportOutcome {
  created: number;
  skipped: number;
  existing: number;
}

const LABEL: Record<ImportKind, string> = {
  group: "group",
  notification_channel: "channel",
  monitor: "monitor",
  maintenance_window: "maintenance window",
  status_page: "status page",
};

type Created = { id: number; attributes: Record<string, unknown> };

/** A 422's details as one readable reason: "target: must be ...; interval_sec: ...". */
function refusal(err: ApiError): string {
  const details = Object.entries(err.details ?? {}).map(([k, v]) => `${k}: ${v.join(", ")}`);
  return `Vigil refused it (${details.join("; ") || err.message})`;
}

export async function applyImport(ctx: AppContext, actor: Actor, plan: ImportPlan, o: { dryRun: boolean; out: (line: string) => void }): Promise<ImportOutcome> {
  const { out } = o;
  const outcome: ImportOutcome = { created: 0, skipped: 0, existing: 0 };
  const existing = await existingByName(ctx.db, actor.accountId);
  /** source ref → Vigil id, of what was created or found; dry runs count ids of their own */
  const ids = new Map<string, number>();
  let dryId = 0;
  const names = new Map(plan.items.map((i) => [i.ref, i.name]));
  let pingUrls = false;
  const heartbeatUrl = (token: string | null | undefined) => (token ? ((pingUrls = true), `${ctx.config.heartbeatUrl}/h/${token}`) : null);

  for (const line of plan.header) out(line);
  if (o.dryRun) out("dry run: nothing will be written");

  const line = (verb: string, item: PlannedItem, text: string) => {
    const notes = item.notes.length ? `; ${item.notes.join("; ")}` : "";
    out(`${verb.padEnd(12)} ${LABEL[item.kind]} "${item.name}" [${plan.source} ${item.ref}, ${item.what}]: ${text}${notes}`);
  };

  /** refs resolved to ids; the ones not imported are named in a note */
  const resolve = (item: PlannedItem, refs: string[] | undefined, what: string): number[] => {
    const found: number[] = [];
    const missing: string[] = [];
    for (const ref of refs ?? []) {
      const id = ids.get(ref);
      if (id === undefined) missing.push(ref);
      else if (!found.includes(id)) found.push(id);
    }
    if (missing.length) item.notes.push(`${what} not imported, so not linked: ${missing.map((ref) => (names.has(ref) ? `"${names.get(ref)}" (${ref})` : ref)).join(", ")}`);
    return found;
  };

  for (const kind of KIND_ORDER) {
    for (const item of plan.items.filter((i) => i.kind === kind)) {
      if (item.skip) {
        outcome.skipped++;
        line("skipped", item, item.skip);
        continue;
      }
      const before = existing[kind].get(item.name.toLowerCase());
      if (before) {
        ids.set(item.ref, before.id);
        outcome.existing++;
        const ping = heartbeatUrl(before.heartbeatToken);
        line("exists", item, `the account has a ${LABEL[kind]} with this name (id ${before.id}): left as it is${ping ? `; its ping URL: ${ping}` : ""}`);
        continue;
      }
      const attrs: Record<string, unknown> = { ...item.attributes };
      if (kind === "monitor") {
        attrs.notification_channel_ids = resolve(item, item.channelRefs, "channels");
        if (item.groupRef) attrs.group_id = resolve(item, [item.groupRef], "group")[0] ?? null;
      }
      if (kind === "maintenance_window" || kind === "status_page") {
        attrs.monitor_ids = resolve(item, item.monitorRefs, "monitors");
        if (kind === "maintenance_window" && (attrs.monitor_ids as number[]).length === 0) {
          outcome.skipped++;
          line("skipped", item, (item.monitorRefs ?? []).length ? "none of its monitors was imported" : "it holds no monitors");
          continue;
        }
      }
      try {
        if (o.dryRun) {
          const problems = dryCheck(ctx, kind, attrs);
          if (problems) {
            outcome.skipped++;
            line("skipped", item, problems);
            continue;
          }
          ids.set(item.ref, --dryId);
          outcome.created++;
          line("would create", item, kind === "monitor" ? `as ${attrs.monitor_type} monitor${attrs.monitor_type === "heartbeat" ? " with a new ping URL" : ""}` : `as ${LABEL[kind]}`);
          continue;
        }
        const made = await create(ctx, actor, kind, attrs, item);
        ids.set(item.ref, made.id);
        outcome.created++;
        const ping = kind === "monitor" ? heartbeatUrl(made.attributes.heartbeat_token as string | null) : null;
        const as = kind === "monitor" ? `${made.attributes.monitor_type} monitor ${made.id}${made.attributes.is_paused ? " (paused)" : ""}` : `${LABEL[kind]} ${made.id}`;
        line("created", item, `as ${as}${ping ? `; new ping URL: ${ping}` : ""}`);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 422) throw err;
        outcome.skipped++;
        line("skipped", item, refusal(err));
      }
    }
  }
  for (const n of plan.notices) out(`note: ${n}`);
  if (pingUrls && !ctx.config.heartbeatUrlFixed) out(`note: the ping URLs above start with ${ctx.config.heartbeatUrl}, the default: run again with --heartbeat-url (or --base-url) set to the address your jobs reach Vigil at to see them as they will be used (the tokens stay the same)`);
  const total = `${outcome.created} ${o.dryRun ? "to create" : "created"}, ${outcome.skipped} skipped, ${outcome.existing} already in the account`;
  out(o.dryRun ? `dry run of the ${plan.source} import: ${total}; nothing was written` : `${plan.source} import done: ${total}`);
  return outcome;
}

/** The pure validators of each kind, as a dry run's stand-in for the write: the reason it would be refused, or null. */
function dryCheck(ctx: AppContext, kind: ImportKind, attrs: Record<string, unknown>): string | null {
  // ids of items a dry run would create are negative; the validators want positive ones
  const real = (v: unknown) => (Array.isArray(v) ? v.map((id) => Math.abs(id as number)) : typeof v === "number" ? Math.abs(v) : v);
  const a = { ...attrs };
  for (const k of ["monitor_ids", "notification_channel_ids", "group_id"]) if (a[k] !== undefined && a[k] !== null) a[k] = real(a[k]);
  const details =
    kind === "group" ? validateGroupWrite(a, true).details
    : kind === "monitor" ? validateMonitorWrite(a).details
    : kind === "notification_channel" ? validateChannelWrite(a).details
    : kind === "maintenance_window" ? validateWindowWrite(a).details
    : validateStatusPageWrite(a, ctx.config).details;
  return Object.keys(details).length ? refusal(new ApiError(422, "validation_error", "", details)) : null;
}

async function create(ctx: AppContext, actor: Actor, kind: ImportKind, attrs: Record<string, unknown>, item: PlannedItem): Promise<Created> {
  if (kind === "group") return (await createGroup(ctx, actor, attrs)) as unknown as Created;
  if (kind === "notification_channel") return (await createChannel(ctx, actor, attrs)) as Created;
  if (kind === "monitor") return (await createMonitor(ctx, actor, attrs)) as unknown as Created;
  if (kind === "maintenance_window") return (await createMaintenanceWindow(ctx, actor, attrs)) as unknown as Created;
  try {
    return (await createStatusPage(ctx, actor, attrs)) as unknown as Created;
  } catch (err) {
    // a slug or custom domain another page of the instance holds: the page comes without it
    const taken = err instanceof ApiError && err.status === 422 ? (["slug", "custom_domain"] as const).filter((k) => err.details?.[k]?.includes("has already been taken")) : [];
    if (!taken.length) throw err;
    for (const k of taken) {
      item.notes.push(`${k === "slug" ? `slug "${attrs.slug}"` : `custom domain ${attrs.custom_domain}`} is taken on this Vigil: ${k === "slug" ? "one is made from the name" : "not kept"}`);
      delete attrs[k];
    }
    return (await createStatusPage(ctx, actor, attrs)) as unknown as Created;
  }
}
