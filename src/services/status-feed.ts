import type { AppContext } from "../context.ts";
import { displayState } from "../domain/display-state.ts";
import { monitorsInActiveWindows } from "../store/maintenance-windows.ts";
import { monitorIdsByUpdate, publishedUpdates } from "../store/status-page-updates.ts";
import { pageIncidents, pageMonitors } from "../store/status-history.ts";
import { statusIncident, statusUpdate, type PublicStatusPage, type StatusIncident, type StatusUpdate } from "./public-status.ts";

/**
 * What a status page's Atom feed says (README "Groups, tags and status page updates"): the incidents
 * Vigil opened and resolved on the page's monitors, and the updates people published, newest first
 * by when each last changed, FEED_ENTRIES at most. Who may read the feed is the web layer's call.
 */
export const FEED_ENTRIES = 50;

/** `heldNow`: the incident's monitor is in maintenance now (domain/display-state.ts), as the page shows it. */
export type FeedItem = { type: "update"; updated: number; update: StatusUpdate } | { type: "incident"; updated: number; incident: StatusIncident; heldNow: boolean };

export async function loadFeed(ctx: AppContext, page: PublicStatusPage): Promise<FeedItem[]> {
  const now = ctx.clock.now();
  const monitors = await pageMonitors(ctx.db, page.id);
  const names = new Map(monitors.map((m) => [m.id, m.name]));
  const [updates, incidents, windowHeld] = await Promise.all([
    publishedUpdates(ctx.db, page.id, now, FEED_ENTRIES),
    pageIncidents(ctx.db, [...names.keys()], 0, FEED_ENTRIES),
    monitorsInActiveWindows(ctx.db, [...names.keys()], now),
  ]);
  const held = new Set(monitors.filter((m) => displayState(m, windowHeld.has(m.id)) === "maintenance").map((m) => m.id));
  const affected = await monitorIdsByUpdate(ctx.db, updates.map((u) => u.id));
  const items: FeedItem[] = [
    ...updates.map((r): FeedItem => ({ type: "update", updated: Math.max(r.updated_at, r.published_at), update: statusUpdate(r, affected.get(r.id) ?? [], names) })),
    ...incidents.map((r): FeedItem => ({ type: "incident", updated: r.resolved_at ?? r.started_at, incident: statusIncident(r, names), heldNow: held.has(r.monitor_id) })),
  ];
  return items.sort((a, b) => b.updated - a.updated).slice(0, FEED_ENTRIES);
}
