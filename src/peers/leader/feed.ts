import type { AppContext } from "../../context.ts";
import { MonitorDefinitionError, rowToProbeMonitor, runsInRegion } from "../../engine/probe-monitor.ts";
import { findMonitorRows } from "../../store/peer-feed.ts";
import { listSchedulableMonitors } from "../../store/schedule.ts";
import type { MonitorRow } from "../../store/tables.ts";
import type { FeedMonitor, FeedResponse } from "../protocol.ts";
import type { MonitorChangeLog } from "./change-log.ts";
import { servesAccount, type Peer } from "./peer-scope.ts";

/**
 * Whether this peer runs the monitor: one of its accounts, active, pulled (not heartbeat), and in
 * its region (regions null = every region).
 */
export function runsOnPeer(row: MonitorRow, peer: Pick<Peer, "region" | "accountIds">): boolean {
  return servesAccount(peer, row.account_id) && row.is_paused === 0 && row.monitor_type !== "heartbeat" && runsInRegion(row, peer.region);
}

/**
 * The probe's view of a monitor, secrets opened: this channel, authorized by a peer token, is the
 * only place plaintext secrets leave the leader (docs/regions.md "Definitions feed").
 */
function feedMonitor(row: MonitorRow, ctx: AppContext): FeedMonitor {
  try {
    return { id: row.id, interval_sec: row.interval_sec, monitor: rowToProbeMonitor(row, ctx.secrets, ctx.privateTargets.blocks(row.account_id)), definition_error: null };
  } catch (err) {
    if (!(err instanceof MonitorDefinitionError)) throw err;
    return { id: row.id, interval_sec: row.interval_sec, monitor: null, definition_error: err.message };
  }
}

/**
 * One answer of the definitions feed for a peer: everything when the cursor is absent or stale (a
 * leader restart), else only what changed since. The cursor is taken before the rows are read, so
 * a change committed meanwhile is sent (again) next time rather than missed. Changes to monitors of
 * accounts the peer does not serve are not mentioned at all, not even as removals.
 */
export async function readFeed(ctx: AppContext, changes: MonitorChangeLog, peer: Pick<Peer, "region" | "accountIds">, cursor: string | null): Promise<FeedResponse> {
  const since = changes.parse(cursor);
  const next = changes.cursor;
  if (since === null) {
    const rows = (await listSchedulableMonitors(ctx.db)).filter((r) => runsOnPeer(r, peer));
    return { cursor: next, full: true, monitors: rows.map((r) => feedMonitor(r, ctx)), removed: [] };
  }
  const ids = changes.changedSince(since, (accountId) => servesAccount(peer, accountId));
  const rows = new Map((await findMonitorRows(ctx.db, ids)).map((r) => [r.id, r]));
  const monitors: FeedMonitor[] = [];
  const removed: number[] = [];
  for (const id of ids) {
    const row = rows.get(id);
    if (row && runsOnPeer(row, peer)) monitors.push(feedMonitor(row, ctx));
    else removed.push(id);
  }
  return { cursor: next, full: false, monitors, removed };
}
