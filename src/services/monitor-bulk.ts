import type { AppContext } from "../context.ts";
import { isTag, TAG_RULE } from "../domain/tags.ts";
import { notFound, validationError } from "../http/errors.ts";
import { ownedGroupIds } from "../store/groups.ts";
import { ownedMonitorIds } from "../store/monitor-dependencies.ts";
import { ownedChannelIds } from "../store/monitors.ts";
import type { Actor } from "./actor.ts";
import { deleteMonitor, getMonitor, updateMonitor, type MonitorItem } from "./monitors.ts";

/**
 * One change to many monitors at once, as the dashboard's list sends it (README "Dashboard"). Every
 * id must be one of the account's monitors, or nothing changes; each monitor is then written as a
 * single update would write it (validation, events, live refresh).
 */
export type BulkChange =
  | { action: "pause" | "resume" | "delete" }
  | { action: "tag"; tag: string }
  | { action: "group"; groupId: number | null }
  | { action: "channel"; channelId: number };

/** The monitors named by `ids`, all of the account's, or a 404 (the same answer as one foreign id). */
export async function ownedMonitors(ctx: AppContext, actor: Actor, ids: number[]): Promise<MonitorItem[]> {
  const unique = [...new Set(ids)];
  const owned = await ownedMonitorIds(ctx.db, actor.accountId, unique);
  if (unique.some((id) => !owned.has(id))) throw notFound("monitor");
  return Promise.all(unique.map((id) => getMonitor(ctx, actor, id)));
}

/** Applies `change` to every monitor of `ids`; answers how many changed (one already paused is not paused again). */
export async function bulkChange(ctx: AppContext, actor: Actor, ids: number[], change: BulkChange): Promise<number> {
  if (change.action === "tag" && !isTag(change.tag)) throw validationError({ tags: [`"${change.tag.slice(0, 60)}" is not a tag (${TAG_RULE})`] });
  if (change.action === "group" && change.groupId !== null && !(await ownedGroupIds(ctx.db, actor.accountId, [change.groupId])).has(change.groupId)) throw notFound("group");
  if (change.action === "channel" && !(await ownedChannelIds(ctx.db, actor.accountId, [change.channelId])).has(change.channelId)) throw notFound("notification channel");
  const monitors = await ownedMonitors(ctx, actor, ids);
  let changed = 0;
  for (const m of monitors) {
    const a = m.attributes;
    if (change.action === "delete") {
      await deleteMonitor(ctx, actor, m.id);
      changed++;
      continue;
    }
    const write =
      change.action === "pause" ? (a.is_paused ? null : { is_paused: true })
      : change.action === "resume" ? (a.is_paused ? { is_paused: false } : null)
      : change.action === "tag" ? (a.tags.includes(change.tag) ? null : { tags: [...a.tags, change.tag] })
      : change.action === "group" ? (a.group_id === change.groupId ? null : { group_id: change.groupId })
      : change.action === "channel" ? (a.notification_channel_ids.includes(change.channelId) ? null : { notification_channel_ids: [...a.notification_channel_ids, change.channelId] })
      : null;
    if (!write) continue;
    await updateMonitor(ctx, actor, m.id, write);
    changed++;
  }
  return changed;
}
