import type { AppContext } from "../context.ts";
import { QUORUM_WINDOW_INTERVALS } from "../domain/consensus.ts";
import { displayState, type DisplayState } from "../domain/display-state.ts";
import { familyHeader, labelValue } from "../lib/prometheus-text.ts";
import { monitorsInActiveWindows } from "../store/maintenance-windows.ts";
import { accountNames, monitorMetricsPage, regionLatencies, type MonitorMetricsRow, type RegionLatencyRow } from "../store/monitor-metrics.ts";

/**
 * The per-monitor series of /metrics (README "Per-monitor metrics"): read from the database at scrape
 * time, so every instance sharing it shows the same, and written as text rather than kept as
 * prom-client children, which would be updated on every check whether anyone scrapes or not. A
 * monitor's series carry its id alone (and the region of a latency), so renaming it, or moving it to
 * another group, keeps its series; its names are on vigil_monitor_info, to join on `id`.
 */

/** vigil_monitor_status's value for each state a monitor is shown in (domain/display-state.ts). */
const MONITOR_STATUS_CODES: Readonly<Record<DisplayState, number>> = { down: 0, up: 1, degraded: 2, unknown: 3, paused: 4, maintenance: 5 };

/** monitors read a statement */
const PAGE = 2000;
/** characters a chunk of the response, about */
const CHUNK = 64 * 1024;

/** One scrape's view of the monitors: a string and a few numbers each, no row kept. */
export interface MonitorMetricsView {
  ids: number[];
  /** each monitor's vigil_monitor_info labels: account, id, name, type, group */
  info: string[];
  status: number[];
  /** the certificate's notAfter in Unix seconds, NaN for none */
  certExpiry: number[];
  latencies: { monitor: number; region: string; seconds: number }[];
}

/**
 * The monitors of one account (`accountId`), or of every account (null), read a page at a time. Each
 * page is followed by a turn of the event loop: on SQLite a statement runs on the serving thread.
 */
export async function readMonitorMetrics(ctx: AppContext, accountId: number | null, pageSize = PAGE): Promise<MonitorMetricsView> {
  const view: MonitorMetricsView = { ids: [], info: [], status: [], certExpiry: [], latencies: [] };
  const accounts = await accountNames(ctx.db, accountId);
  const now = ctx.clock.now();
  let after = 0;
  for (;;) {
    const page = await monitorMetricsPage(ctx.db, accountId, after, pageSize);
    if (page.length === 0) break;
    const last = page[page.length - 1]!.id;
    const [latencies, held] = await Promise.all([regionLatencies(ctx.db, after, last), monitorsInActiveWindows(ctx.db, page.map((m) => m.id), now)]);
    const byMonitor = groupByMonitor(latencies);
    for (const m of page) addMonitor(view, m, accounts.get(m.account_id) ?? "", held.has(m.id), byMonitor.get(m.id), now);
    after = last;
    if (page.length < pageSize) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return view;
}

function groupByMonitor(rows: RegionLatencyRow[]): Map<number, RegionLatencyRow[]> {
  const out = new Map<number, RegionLatencyRow[]>();
  for (const r of rows) {
    const list = out.get(r.monitor_id);
    if (list) list.push(r);
    else out.set(r.monitor_id, [r]);
  }
  return out;
}

function addMonitor(view: MonitorMetricsView, m: MonitorMetricsRow, account: string, heldByWindow: boolean, regions: RegionLatencyRow[] | undefined, now: number): void {
  const i = view.ids.length;
  view.ids.push(m.id);
  view.info.push(`account="${labelValue(account)}",id="${m.id}",name="${labelValue(m.name)}",type="${labelValue(m.monitor_type)}",group="${labelValue(m.group_name ?? "")}"`);
  view.status.push(MONITOR_STATUS_CODES[displayState(m, heldByWindow)]);
  const paused = m.is_paused === 1;
  // a paused monitor is not watched: nothing about it but that it is paused
  view.certExpiry.push(!paused && m.ssl_expiry_last_not_after !== null ? m.ssl_expiry_last_not_after / 1000 : NaN);
  if (paused || !regions) return;
  const allowed = allowedRegions(m.regions);
  // the regions that count for the state (docs/monitors.md "State and consensus"): in the monitor's
  // list, reported since a resume reset it, and within the last 3 intervals
  const oldest = Math.max(now - QUORUM_WINDOW_INTERVALS * m.interval_sec * 1000, m.last_status === "unknown" && m.state_changed_at !== null ? m.state_changed_at : 0);
  for (const r of regions) {
    if (r.last_checked_at < oldest || (allowed && !allowed.includes(r.region))) continue;
    view.latencies.push({ monitor: i, region: r.region, seconds: r.last_latency_ms / 1000 });
  }
}

function allowedRegions(json: string | null): string[] | null {
  if (!json) return null;
  try {
    const list = JSON.parse(json);
    return Array.isArray(list) && list.length > 0 ? list.map(String) : null;
  } catch {
    return null;
  }
}

/**
 * The view as Prometheus text, family after family (a family's samples must be together), in chunks
 * of about 64 KiB. The state and the certificate are the monitor's, over all its regions: `region=""`.
 */
export function* monitorMetricsText(view: MonitorMetricsView): Generator<string> {
  const { ids, info, status, certExpiry, latencies } = view;
  const { down, up, degraded } = MONITOR_STATUS_CODES;
  const families: [header: string, count: number, line: (i: number) => string | null][] = [
    [
      familyHeader("vigil_monitor_info", "gauge", "1 for each monitor, with its names: account, name, type and group (empty when in none); join on id"),
      ids.length,
      (i) => `vigil_monitor_info{${info[i]}} 1\n`,
    ],
    [
      familyHeader("vigil_monitor_up", "gauge", "1 while the monitor is up or degraded, 0 while it is down; no sample while it is unknown, paused or in maintenance"),
      ids.length,
      (i) => (status[i] === up || status[i] === degraded || status[i] === down ? `vigil_monitor_up{id="${ids[i]}",region=""} ${status[i] === down ? 0 : 1}\n` : null),
    ],
    [
      familyHeader("vigil_monitor_status", "gauge", "The monitor's state: 0 down, 1 up, 2 degraded, 3 unknown, 4 paused, 5 maintenance"),
      ids.length,
      (i) => `vigil_monitor_status{id="${ids[i]}",region=""} ${status[i]}\n`,
    ],
    [
      familyHeader("vigil_monitor_latency_seconds", "gauge", "Latency of the monitor's last check in each region that reported within its last 3 intervals"),
      latencies.length,
      (i) => `vigil_monitor_latency_seconds{id="${ids[latencies[i]!.monitor]}",region="${labelValue(latencies[i]!.region)}"} ${latencies[i]!.seconds}\n`,
    ],
    [
      familyHeader("vigil_monitor_cert_expiry_timestamp_seconds", "gauge", "When the certificate seen by the monitor's last TLS check expires (its notAfter), in Unix seconds"),
      ids.length,
      (i) => (Number.isNaN(certExpiry[i]) ? null : `vigil_monitor_cert_expiry_timestamp_seconds{id="${ids[i]}",region=""} ${certExpiry[i]}\n`),
    ],
  ];
  let buf = "";
  for (const [header, count, line] of families) {
    // a family without samples is left out whole: HELP and TYPE alone tell a reader nothing
    let started = false;
    for (let i = 0; i < count; i++) {
      const l = line(i);
      if (l === null) continue;
      if (!started) (buf += header), (started = true);
      buf += l;
      if (buf.length >= CHUNK) {
        yield buf;
        buf = "";
      }
    }
  }
  yield buf;
}
