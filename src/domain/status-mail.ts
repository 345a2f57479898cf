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

export function updateNotice(pageName: string, u: { title: string; kind: string; status: string | null; body: string }, pageUrl: string): { subject: string; body: string } {
  const kind = u.kind === "incident" ? "Incident" : u.kind === "maintenance" ? "Maintenance" : "Update";
  const status = u.status ? ` (${u.status})` : "";
  return {
    subject: `[${pageName}] ${kind}${status}: ${u.title}`,
    body: `${u.title}${status}\n\n${u.body}\n\nThe status page: ${pageUrl}`,
  };
}

/** For every page showing the monitor: "{page}" stands for each page's name. */
export function incidentNotice(monitorName: string, opened: boolean): { subject: string; body: string } {
  return {
    subject: `[{page}] ${monitorName} is ${opened ? "down" : "back up"}`,
    body: opened ? `${monitorName} is not working right now. We will write again when it is back.` : `${monitorName} works again.`,
  };
}
