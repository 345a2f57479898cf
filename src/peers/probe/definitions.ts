import type { AppContext } from "../../context.ts";
import type { ProbeMonitor } from "../../domain/monitor.ts";
import type { Logger } from "../../lib/logger.ts";
import type { MonitorSource, SchedulableMonitor } from "../../scheduler/db-source.ts";
import { loadCachedDefinitions, saveFeedChanges } from "../../store/peer-cache.ts";
import { VERSION } from "../../version.ts";
import type { FeedMonitor, FeedResponse } from "../protocol.ts";

/**
 * A probe's http checks name their region in the User-Agent (unless the monitor sets its own), so
 * the target's operator can tell the probes apart in access logs.
 */
export function probeUserAgent(region: string): string {
  return `Vigil/${VERSION} (uptime monitor; region ${region})`;
}

function withUserAgent(m: ProbeMonitor, ua: string): ProbeMonitor {
  if (m.monitor_type !== "http") return m;
  const headers = m.api_headers_json ?? {};
  if (Object.keys(headers).some((h) => h.toLowerCase() === "user-agent")) return m;
  return { ...m, api_headers_json: { ...headers, "User-Agent": ua } };
}

/**
 * The monitor definitions a probe runs: pulled from the leader's feed, cached (sealed) in the
 * probe's own database, and offered to the scheduler as its MonitorSource. Each applied change is
 * announced as `monitor.changed` on the probe's own event hub, which the scheduler follows exactly
 * as it follows API edits on the leader.
 */
export class ProbeDefinitions {
  private defs = new Map<number, FeedMonitor>();
  cursor: string | null = null;
  /** true once definitions came from the cache or the leader: the probe knows what to run */
  loaded = false;
  private readonly ua: string;

  constructor(private readonly ctx: AppContext, private readonly log: Logger) {
    this.ua = probeUserAgent(ctx.config.region);
  }

  get size(): number {
    return this.defs.size;
  }

  /** Reads the cache; an entry that no longer opens (the secret key changed) is skipped and refetched. */
  async loadCache(): Promise<void> {
    const { cursor, definitions } = await loadCachedDefinitions(this.ctx.db);
    let unreadable = 0;
    for (const d of definitions) {
      try {
        this.defs.set(d.id, JSON.parse(this.ctx.secrets.open(d.sealed)) as FeedMonitor);
      } catch {
        unreadable++;
      }
    }
    // with an unreadable entry the cache is incomplete: ask for everything
    this.cursor = unreadable ? null : cursor;
    this.loaded = cursor !== null && unreadable === 0;
    this.log.info("cached monitor definitions loaded", { monitors: this.defs.size, unreadable });
  }

  /** Applies one feed answer: cache first (so a crash never loses it), then memory, then the scheduler. */
  async apply(feed: FeedResponse): Promise<{ changed: number; removed: number }> {
    const changed: FeedMonitor[] = feed.monitors.filter((m) => JSON.stringify(this.defs.get(m.id)) !== JSON.stringify(m));
    const removed = feed.full ? [...this.defs.keys()].filter((id) => !feed.monitors.some((m) => m.id === id)) : feed.removed.filter((id) => this.defs.has(id));
    await saveFeedChanges(this.ctx.db, {
      replaceAll: feed.full,
      put: (feed.full ? feed.monitors : changed).map((m) => ({ id: m.id, sealed: this.ctx.secrets.seal(JSON.stringify(m)) })),
      remove: removed,
      cursor: feed.cursor,
    });
    for (const m of changed) this.defs.set(m.id, m);
    for (const id of removed) this.defs.delete(id);
    this.cursor = feed.cursor;
    this.loaded = true;
    for (const m of changed) this.ctx.events.emit("monitor.changed", { monitorId: m.id, accountId: 0 });
    for (const id of removed) this.ctx.events.emit("monitor.changed", { monitorId: id, accountId: 0 });
    if (changed.length || removed.length || feed.full) {
      this.log.info("monitor definitions updated", { full: feed.full, changed: changed.length, removed: removed.length, monitors: this.defs.size });
    }
    return { changed: changed.length, removed: removed.length };
  }

  /** The scheduler's view: next runs are not persisted on a probe (a restarted probe checks at once). */
  source(): MonitorSource {
    const toSchedulable = (d: FeedMonitor): SchedulableMonitor => ({
      id: d.id,
      // the feed names no account: a probe's monitors share its slots, and take their pattern turns,
      // as one account's
      accountId: 0,
      intervalSec: d.interval_sec,
      nextRunAt: null,
      lastCheckedAt: null,
      build: () => {
        if (!d.monitor) throw new Error(d.definition_error ?? "the monitor definition cannot be run");
        return withUserAgent(d.monitor, this.ua);
      },
    });
    return {
      loadAll: async () => [...this.defs.values()].map(toSchedulable),
      loadOne: async (id) => {
        const d = this.defs.get(id);
        return d ? toSchedulable(d) : null;
      },
    };
  }
}
