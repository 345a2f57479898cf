import type { MonitorAttributes } from "../../domain/monitor-schema.ts";
import { html, type SafeHtml } from "../html.ts";
import { stateBadge } from "./widgets.ts";

/**
 * The monitor page's "Dependencies and alerting" panel (README "Dependencies, reminders and
 * escalation"): the monitors it depends on and those that depend on it, each a link with its
 * state, and its reminders and escalation in words.
 */
export interface Neighbour {
  id: number;
  name: string;
  last_status: string;
}

function links(list: Neighbour[], none: string): SafeHtml {
  if (list.length === 0) return html`<span class="muted">${none}</span>`;
  return html`<ul class="plain">${list.map((m) => html`<li><a href="/monitors/${m.id}">${m.name}</a> ${stateBadge(m.last_status)}</li>`)}</ul>`;
}

export function dependencyPanel(o: { parents: Neighbour[]; children: Neighbour[]; attributes: MonitorAttributes; channelNames: Map<number, string> }): SafeHtml {
  const a = o.attributes;
  const reminders = a.alert_repeat_minutes === null ? "none" : `every ${a.alert_repeat_minutes} min while an incident is open`;
  const escalateTo = a.escalation_channel_ids.map((id) => o.channelNames.get(id) ?? `channel ${id}`);
  const escalation = a.escalate_after_minutes === null || escalateTo.length === 0 ? "none" : `to ${escalateTo.join(", ")} after ${a.escalate_after_minutes} min of an open incident`;
  return html`<section class="panel" aria-labelledby="deps-h"><h2 id="deps-h">Dependencies and alerting</h2><dl class="kv">
<dt>Depends on</dt><dd>${links(o.parents, "nothing")}${o.parents.length ? html`<span class="hint">While one of these is down, this monitor's incidents wait for it before they alert.</span>` : ""}</dd>
<dt>Depended on by</dt><dd>${links(o.children, "no monitor")}</dd>
<dt>Reminders</dt><dd>${reminders}</dd>
<dt>Escalation</dt><dd>${escalation}</dd>
</dl></section>`;
}
