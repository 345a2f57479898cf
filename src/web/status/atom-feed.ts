import { publicErrorWording } from "../../domain/error-wording.ts";
import type { PublicStatusPage, StatusIncident, StatusUpdate } from "../../services/public-status.ts";
import type { FeedItem } from "../../services/status-feed.ts";
import { VERSION } from "../../version.ts";
import { utcMinute } from "../../lib/dates.ts";
import { formatDuration } from "../views/widgets.ts";
import { KIND_LABEL, STATUS_LABEL } from "./update-labels.ts";

/**
 * A status page's Atom feed (RFC 4287; README "Groups, tags and status page updates"). Every text is
 * escaped as XML and sent as type="text", so a title holding markup is read as the characters it
 * is; characters XML 1.0 cannot carry at all become U+FFFD. Entry ids are tag URIs (RFC 4151) made
 * of the instance's host, the page's creation date, the page's id and the entry's: they do not change
 * when the page is renamed or its slug changes.
 */

// XML 1.0 "Char": tab, newline, carriage return and U+0020 onwards, less the surrogates and U+FFFE/U+FFFF
// (a lone surrogate is matched as one character by the u flag)
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

function xmlText(text: string): string {
  return text.replace(NOT_XML, "\uFFFD").replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
}

const iso = (ms: number) => new Date(ms).toISOString();

interface FeedLinks {
  /** the page's address (entries link to #update-<id> and #incident-<id> on it), absolute or from "/" */
  page: string;
  /** the feed's own address, likewise */
  self: string;
  /** the host the entry ids are minted under */
  host: string;
}

function updateEntry(u: StatusUpdate): { key: string; title: string; content: string; published: number; category: string } {
  const status = u.status ? ` [${STATUS_LABEL[u.status]}]` : "";
  const affected = u.affected.length ? `\n\nAffects: ${u.affected.join(", ")}` : "";
  return { key: `update-${u.id}`, title: `${u.title}${status}`, content: `${u.body}${affected}`, published: u.publishedAt, category: u.kind };
}

/** `heldNow`: an open incident's monitor is in maintenance now, which the page shows instead of down. */
function incidentEntry(i: StatusIncident, heldNow: boolean): { key: string; title: string; content: string; published: number; category: string } {
  const cause = publicErrorWording(i.errorCode);
  const what =
    i.resolvedAt === null && heldNow
      ? { title: `${i.monitorName} is under maintenance`, text: `Down since ${utcMinute(i.startedAt)}; under maintenance now.` }
      : i.resolvedAt === null
      ? { title: `${i.monitorName} is down`, text: `Down since ${utcMinute(i.startedAt)}.` }
      : { title: `${i.monitorName} is back up`, text: `Down from ${utcMinute(i.startedAt)} for ${formatDuration(i.durationMs)}; back up at ${utcMinute(i.resolvedAt)}.` };
  return { key: `incident-${i.id}`, title: what.title, content: cause ? `${what.text} ${cause}.` : what.text, published: i.startedAt, category: "outage" };
}

export function atomFeed(page: PublicStatusPage, items: FeedItem[], links: FeedLinks): string {
  const tag = (specific: string) => `tag:${links.host},${iso(page.createdAt).slice(0, 10)}:vigil/status-page/${page.id}${specific}`;
  const updated = items.length ? Math.max(...items.map((i) => i.updated)) : page.createdAt;
  const entries = items.map((item) => {
    const e = item.type === "update" ? updateEntry(item.update) : incidentEntry(item.incident, item.heldNow);
    return `<entry>
<id>${xmlText(tag(`/${e.key.replace("-", "/")}`))}</id>
<title type="text">${xmlText(e.title)}</title>
<updated>${iso(item.updated)}</updated>
<published>${iso(e.published)}</published>
<link rel="alternate" type="text/html" href="${xmlText(`${links.page}#${e.key}`)}"/>
<category term="${e.category}" label="${xmlText(item.type === "update" ? KIND_LABEL[item.update.kind] : "Outage")}"/>
<content type="text">${xmlText(e.content)}</content>
</entry>`;
  });
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${xmlText(tag(""))}</id>
<title type="text">${xmlText(page.name)}</title>
${page.headline ? `<subtitle type="text">${xmlText(page.headline)}</subtitle>\n` : ""}<updated>${iso(updated)}</updated>
<link rel="self" type="application/atom+xml" href="${xmlText(links.self)}"/>
<link rel="alternate" type="text/html" href="${xmlText(links.page)}"/>
<author><name>${xmlText(page.name)}</name></author>
<generator version="${VERSION}">Vigil</generator>
${entries.join("\n")}
</feed>
`;
}
