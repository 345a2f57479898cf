/**
 * The words of status page subscription mail (README "Status pages"): plain text, for people who
 * asked for them; every notice ends with its unsubscribe link, added when it is sent.
 */

/** 48 hours to follow a confirmation link. */
export const CONFIRM_TTL_MS = 48 * 3600_000;

/** A plausible address: one @, no spaces or angle brackets, a dot in the domain, at most 254 characters. */
export function normalEmail(v: string): string | null {
  const t = v.trim();
  if (t.length > 254 || !/^[^\s@<>",;]{1,64}@[^\s@<>",;]+\.[^\s@<>",;.]+$/.test(t)) return null;
  const at = t.lastIndexOf("@");
  return t.slice(0, at) + "@" + t.slice(at + 1).toLowerCase();
}

export function confirmMail(pageName: string): { subject: string; body: string } {
  return {
    subject: `Confirm your subscription to ${pageName}`,
    body: `Someone, probably you, asked to get updates of the status page "${pageName}" by email.\n\nTo confirm, open this link within 48 hours:\n\n{link}\n\nIf it was not you, ignore this mail: nothing more will be sent.`,
  };
}

/**
 * A mail of an update written by people: when it is published, and again when its incident status
 * changes (`previous`: the status the last mail said).
 */
export function updateNotice(pageName: string, u: { title: string; kind: string; status: string | null; body: string }, pageUrl: string, previous: string | null = null): { subject: string; body: string } {
  const kind = u.kind === "incident" ? "Incident" : u.kind === "maintenance" ? "Maintenance" : "Update";
  const status = u.status ? ` (${u.status})` : "";
  const step = previous !== null && u.status ? `Status: ${u.status} (was ${previous})\n\n` : "";
  return {
    subject: `[${pageName}] ${kind}${status}: ${u.title}`,
    body: `${step}${u.title}${status}\n\n${u.body}\n\nThe status page: ${pageUrl}`,
  };
}

/** An incident opening (isDown) or resolving on a monitor of the page, as noted for its subscribers. */
export interface NotedChange {
  monitorId: number;
  name: string;
  at: number;
  isDown: boolean;
}

/** What one monitor did since the page's last mail. */
interface MonitorSummary {
  name: string;
  isDown: boolean;
  /** incidents opened */
  downs: number;
  firstAt: number;
  lastAt: number;
}

function summarize(changes: NotedChange[]): MonitorSummary[] {
  const byMonitor = new Map<number, MonitorSummary>();
  for (const c of [...changes].sort((a, b) => a.at - b.at)) {
    const m = byMonitor.get(c.monitorId) ?? byMonitor.set(c.monitorId, { name: c.name, isDown: c.isDown, downs: 0, firstAt: c.at, lastAt: c.at }).get(c.monitorId)!;
    m.isDown = c.isDown;
    m.lastAt = c.at;
    if (c.isDown) m.downs++;
  }
  return [...byMonitor.values()];
}

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
const times = (n: number) => (n === 1 ? "once" : `${n} times`);

function line(m: MonitorSummary): string {
  if (m.isDown) return `${m.name} is down since ${utc(m.lastAt)}.${m.downs > 1 ? ` It went down ${times(m.downs)} since ${utc(m.firstAt)}.` : ""}`;
  return `${m.name} works again since ${utc(m.lastAt)}.${m.downs > 0 ? ` It went down ${times(m.downs)} since ${utc(m.firstAt)}.` : ""}`;
}

/**
 * One mail of the incidents that opened and resolved on a page's monitors since its last one
 * (README "Email subscriptions"): each monitor once, with its latest state, however often it
 * changed. "{page}" stands for the page's name.
 */
export function changesNotice(changes: NotedChange[]): { subject: string; body: string } {
  const monitors = summarize(changes);
  const state = (m: MonitorSummary) => (m.isDown ? "down" : "back up");
  const shown = monitors.slice(0, 3).map((m) => `${m.name} ${state(m)}`);
  const subject =
    monitors.length === 1
      ? `[{page}] ${monitors[0]!.name} is ${state(monitors[0]!)}`
      : `[{page}] ${shown.join(", ")}${monitors.length > 3 ? ` and ${monitors.length - 3} more` : ""}`;
  const closing = monitors.some((m) => m.isDown) ? "We will write again when this changes." : "Everything named here works again.";
  return { subject, body: `${monitors.map(line).join("\n")}\n\n${closing}` };
}
