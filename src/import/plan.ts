/**
 * What an import means to create, before anything is written (README "Coming from Uptime Kuma",
 * "Coming from Gatus"): each item of the source becomes one planned item, to create through the
 * services or to skip with the reason. References between items (a monitor's channels, a window's
 * monitors) name the source's items by `ref`; apply.ts turns them into Vigil ids as it goes.
 */
import { isTag, MAX_TAGS, TAG_MAX_LENGTH } from "../domain/tags.ts";
import { bodyChecksOnHead, type BodyCheck } from "../domain/body-checks.ts";

export type ImportKind = "group" | "notification_channel" | "monitor" | "maintenance_window" | "status_page";

/** The order items are created in: what is referred to comes first. */
export const KIND_ORDER: readonly ImportKind[] = ["group", "notification_channel", "monitor", "maintenance_window", "status_page"];

export interface PlannedItem {
  kind: ImportKind;
  /** the source's own name for it, unique per source: "monitor 12", "notification 3", "endpoint api" */
  ref: string;
  /** the name it gets in Vigil (also what a second run looks for) */
  name: string;
  /** what the source calls its kind, shown on the line: "keyword monitor", "slack notification" */
  what: string;
  /** the attributes sent to the service, references left out */
  attributes: Record<string, unknown>;
  /** refs of channels linked to a monitor (notification_channel_ids) */
  channelRefs?: string[];
  /** refs of monitors (a window's or a page's monitor_ids) */
  monitorRefs?: string[];
  /** ref of the group a monitor is in (group_id) */
  groupRef?: string;
  /** set when the item is not created: why */
  skip?: string;
  /** what of the source item was not kept or was changed, said on its line */
  notes: string[];
}

export interface ImportPlan {
  /** "uptime-kuma" or "gatus" */
  source: string;
  /** said before the items: what was read */
  header: string[];
  items: PlannedItem[];
  /** said once, after the items: what applies to many items (such as retries) */
  notices: string[];
}

/**
 * Names unique per kind within one import, so a second run can find what the first created:
 * the second "API" of a source becomes "API (2)".
 */
export class NameBook {
  private readonly used = new Map<string, Set<string>>();

  take(kind: ImportKind, wanted: string, notes: string[]): string {
    const base = wanted.trim().slice(0, 190) || "unnamed";
    const taken = this.used.get(kind) ?? new Set<string>();
    this.used.set(kind, taken);
    let name = base;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${base} (${n})`;
    taken.add(name.toLowerCase());
    if (name !== base) notes.push(`renamed to "${name}": another item of the source has the same name`);
    return name;
  }
}

/** Go's time.Duration text ("30s", "1h30m", "500ms") in milliseconds, or null. */
export function goDurationMs(text: unknown): number | null {
  if (typeof text === "number") return text; // YAML numbers: Gatus reads them as nanoseconds, but nobody writes that; treated as ms
  if (typeof text !== "string") return null;
  const s = text.trim();
  if (s === "0") return 0;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * unit[m[2]!]!;
    end = re.lastIndex;
  }
  return end === s.length && end > 0 ? total : null;
}

/** An interval in seconds within Vigil's 10 to 86400, with a note when it had to move. */
export function fitInterval(sec: number, notes: string[]): number {
  const fitted = Math.min(86400, Math.max(10, Math.round(sec)));
  if (fitted !== Math.round(sec)) notes.push(`interval ${Math.round(sec)} s is outside Vigil's 10 to 86400 s: set to ${fitted} s`);
  return fitted;
}

/** A timeout in ms within 100 to 60000 and below the interval, with a note when it had to move. */
export function fitTimeout(ms: number, intervalSec: number, notes: string[]): number {
  const fitted = Math.max(100, Math.min(60_000, intervalSec * 1000 - 1000, Math.round(ms)));
  if (fitted !== Math.round(ms)) notes.push(`timeout ${Math.round(ms)} ms does not fit Vigil's 100 to 60000 ms below the interval: set to ${fitted} ms`);
  return fitted;
}

/**
 * Monitor tags as Vigil takes them (domain/tags.ts): characters a tag may not hold become "-", the
 * length and count are cut to the limits; what changed or was left out is said in `notes`.
 */
const BODY_CHECK_WORDS: Record<BodyCheck, (v: unknown) => string> = {
  keyword: (v) => `keyword ${JSON.stringify(v)}`,
  api_expected_body_contains: (v) => `body text ${JSON.stringify(v)}`,
  api_json_assertions_json: (v) => `JSON check${(v as unknown[]).length === 1 ? "" : "s"}`,
};

/**
 * A HEAD monitor's body checks could never pass (its answer has no body), and Vigil refuses them
 * (docs/monitors.md, "HTTP answers"): the monitor comes without them, each said in a note, rather than
 * not at all. In the tool it came from it could never be up either.
 */
export function dropBodyChecksOnHead(attributes: Record<string, unknown>, notes: string[]): void {
  for (const check of bodyChecksOnHead(attributes)) {
    notes.push(`${BODY_CHECK_WORDS[check](attributes[check])} not kept: the answer to a HEAD request has no body, so it could never be met (use GET to check the body)`);
    delete attributes[check];
  }
}

export function fitTags(wanted: string[], notes: string[]): string[] {
  const tags: string[] = [];
  for (const w of wanted) {
    const tag = w.trim().replace(/[^\p{L}\p{M}\p{Nd} _.:/-]/gu, "-").slice(0, TAG_MAX_LENGTH).trim();
    if (!isTag(tag)) {
      notes.push(`tag "${w}" not kept: it has no letter or digit`);
      continue;
    }
    if (tag !== w.trim()) notes.push(`tag "${w}" kept as "${tag}"`);
    if (!tags.includes(tag)) tags.push(tag);
  }
  if (tags.length > MAX_TAGS) notes.push(`tags ${tags.slice(MAX_TAGS).join(", ")} not kept: a monitor has at most ${MAX_TAGS}`);
  return tags.slice(0, MAX_TAGS);
}

/** "1 monitor", "3 monitors". */
export const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** `host:port`, with brackets around an IPv6 address. */
export function hostPort(host: string, port: number | string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}
