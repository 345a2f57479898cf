import { html, type SafeHtml } from "../html.ts";
import { renderField, type Errors, type FieldSpec } from "./fields.ts";

/**
 * The monitor form's "Dependencies and alerting" section (README "Dependencies, reminders and
 * escalation"): which monitors this one depends on, picked from the account's monitors, and the
 * reminders and escalation in plain words. A section of its own, beside the per-type fields.
 */
export const ALERTING_ATTRIBUTES: ReadonlySet<string> = new Set(["depends_on_ids", "alert_repeat_minutes", "escalation_channel_ids", "escalate_after_minutes"]);

export type Choice = { value: number; label: string };

export function alertingFields(monitors: Choice[], channels: Choice[]): FieldSpec[] {
  return [
    {
      name: "depends_on_ids",
      label: "Depends on",
      widget: "choices",
      nullable: false,
      choices: monitors,
      hint: "While one of these is down, this monitor's incidents alert nobody; if it is still down once they are all up again, it alerts then.",
    },
    { name: "alert_repeat_minutes", label: "Remind every (minutes)", widget: "number", nullable: true, hint: "While an incident stays open, its down alert is sent again this often (5 to 1440). Empty: no reminders." },
    {
      name: "escalation_channel_ids",
      label: "Escalate to",
      widget: "choices",
      nullable: false,
      choices: channels,
      hint: "Once an incident has been open as long as set below, these channels get its down alert too, and then its recovery.",
    },
    { name: "escalate_after_minutes", label: "Escalate after (minutes)", widget: "number", nullable: true, hint: "1 to 1440. Empty: never." },
  ];
}

/**
 * The section itself. The list of monitors can be long: a filter box (shown by app.client.js, the
 * list works without it) narrows it by name.
 */
export function alertingSection(fields: FieldSpec[], values: Record<string, unknown>, errors: Errors): SafeHtml {
  const field = (name: string) => {
    const f = fields.find((x) => x.name === name);
    return f ? renderField(f, values[name], errors) : "";
  };
  const monitors = fields.find((f) => f.name === "depends_on_ids")?.choices ?? [];
  return html`<section class="panel" aria-labelledby="alerting-h"><h2 id="alerting-h">Dependencies and alerting</h2>
${monitors.length > 8 ? html`<div class="field" data-filter-box hidden><label for="dep-filter">Find a monitor</label><input type="search" id="dep-filter" data-filter="dep-pick" autocomplete="off"></div>` : ""}
<div class="pick" id="dep-pick">${field("depends_on_ids")}</div>
${field("alert_repeat_minutes")}
${field("escalation_channel_ids")}
${field("escalate_after_minutes")}
</section>`;
}
