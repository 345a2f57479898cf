import { daysLeft, expiryDateText, expiryKind, expiryStage, expiryWarnDays } from "../../domain/expiry-stage.ts";
import type { MonitorAttributes } from "../../domain/monitor-schema.ts";
import type { CheckItem } from "../../services/checks.ts";
import { html, type SafeHtml } from "../html.ts";
import { when } from "./widgets.ts";

/**
 * What the monitor's last checks found beyond up or down: the certificate (or, for a domain
 * monitor, the registration) with its expiry date, days left and issuer; a dns monitor's answer.
 * Checks are newest first.
 */
export function monitorFacts(a: MonitorAttributes, checks: CheckItem[], now: number): SafeHtml {
  return html`${expiryPanel(a, checks, now)}${a.monitor_type === "dns" ? dnsAnswerPanel(a, checks) : ""}`;
}

/** a badge like the state badges: icon and words, so colour is never the only signal */
function expiryBadge(notAfter: number, now: number, warnDays: number): SafeHtml {
  if (notAfter <= now) return html`<span class="st st-down"><span aria-hidden="true">✖</span> Expired</span>`;
  if (expiryStage(notAfter, now, warnDays) > 0) return html`<span class="st st-degraded"><span aria-hidden="true">▲</span> Expires soon</span>`;
  return html`<span class="st st-up"><span aria-hidden="true">✔</span> Valid</span>`;
}

/**
 * Shown for any monitor whose checks carry an expiry date (`ssl_not_after`): the newest check that
 * has one, else the date kept on the monitor.
 */
function expiryPanel(a: MonitorAttributes, checks: CheckItem[], now: number): SafeHtml | "" {
  const seen = checks.find((c) => c.attributes.ssl_not_after !== null)?.attributes.ssl_not_after ?? a.ssl_expiry_last_not_after ?? null;
  if (!seen) return "";
  const notAfter = Date.parse(seen);
  const extra = a as Record<string, unknown>;
  const warnDays = expiryWarnDays({
    monitor_type: a.monitor_type,
    ssl_expiry_warn_days: a.ssl_expiry_warn_days ?? null,
    domain_expiry_warn_days: typeof extra.domain_expiry_warn_days === "number" ? extra.domain_expiry_warn_days : null,
  });
  const domain = expiryKind(a.monitor_type) === "domain";
  const left = daysLeft(notAfter, now);
  return html`<section class="panel" aria-labelledby="expiry-h"><h2 id="expiry-h">${domain ? "Domain registration" : "Certificate"}</h2><dl class="kv">
<dt>Expires</dt><dd>${expiryDateText(notAfter)} ${expiryBadge(notAfter, now, warnDays)}</dd>
<dt>Days left</dt><dd>${notAfter <= now ? "none: expired" : left < 1 ? "less than a day" : `${left} day${left === 1 ? "" : "s"}`}</dd>
${domain ? "" : html`<dt>Issuer</dt><dd>${a.ssl_last_issuer ?? "—"}</dd>`}
<dt>Alerts</dt><dd>on entering the ${warnDays}-day window, then at 7 and at 1 day left</dd></dl></section>`;
}

function dnsAnswerPanel(a: MonitorAttributes, checks: CheckItem[]): SafeHtml {
  const last = checks.find((c) => c.attributes.dns_answer !== null)?.attributes;
  const answer = last?.dns_answer ?? [];
  return html`<section class="panel" aria-labelledby="dns-h"><h2 id="dns-h">DNS answer</h2>${
    last
      ? html`<dl class="kv"><dt>Last answer</dt><dd class="mono answer">${answer.length ? answer.map((r, i) => html`${i ? html`<br>` : ""}${r}`) : "no records"}</dd>
<dt>Record type</dt><dd>${a.dns_record_type ?? "A"}</dd>
<dt>Expected</dt><dd class="mono answer">${a.dns_expected_answer ?? "any answer"}</dd>
<dt>Seen</dt><dd>${when(last.checked_at)}${last.region ? ` (${last.region})` : ""}</dd></dl>`
      : html`<p class="muted">No answer recorded yet.</p>`
  }</section>`;
}
