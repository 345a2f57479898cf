/**
 * The plan for a Gatus configuration file (README "Coming from Gatus"): its alerting providers as
 * notification channels, its endpoints as monitors (their conditions through
 * gatus-conditions.ts), its external endpoints as heartbeat monitors, and its maintenance as
 * recurring windows. `$VAR` and `${VAR}` are read from the environment first, as Gatus does, but
 * only for the variables the operator named (`--env`): a file naming others is refused whole.
 */
import { mapConditions, codesText, type EndpointKind } from "./gatus-conditions.ts";
import { count, dropBodyChecksOnHead, fitInterval, fitTimeout, goDurationMs, NameBook, type ImportPlan, type PlannedItem } from "./plan.ts";

export class GatusFileError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : typeof v === "number" ? String(v) : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const ENV_REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** The variables a file reads from the environment (`$VAR`, `${VAR}`; `$$` is a dollar), in order. */
function gatusEnvNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(ENV_REFERENCE)) if (m[0] !== "$$") names.add((m[1] ?? m[2])!);
  return [...names];
}

/**
 * Gatus's environment expansion, over the variables the operator allowed: a tenant's file must not
 * copy the operator's environment (VIGIL_SECRET_KEY, cloud credentials) into the tenant's monitors.
 */
function expandEnv(text: string, env: Record<string, string | undefined>, allowed: ReadonlySet<string>, missing: Set<string>): string {
  const refused = gatusEnvNames(text).filter((n) => !allowed.has(n));
  if (refused.length) {
    const shown = refused.map((n) => `\${${n}}`).join(", ");
    throw new GatusFileError(
      `it reads ${shown} from the environment, and vigil import reads only the variables named with --env: run it again with --env ${refused.join(",")} to read ${refused.length === 1 ? "it" : "them"}, or write the value${refused.length === 1 ? "" : "s"} in the file ($$ is a literal dollar)`,
    );
  }
  return text.replace(ENV_REFERENCE, (all, braced: string | undefined, bare: string | undefined) => {
    if (all === "$$") return "$";
    const name = (braced ?? bare)!;
    if (env[name] === undefined) missing.add(name);
    return env[name] ?? "";
  });
}

type Mapped = { attributes: Obj; notes: string[] } | { skip: string };
const ok = (attributes: Obj, notes: string[] = []): Mapped => ({ attributes, notes });

function needs(c: Obj, keys: string[], build: () => Mapped): Mapped {
  const missing = keys.filter((k) => str(c[k]) === null && !(Array.isArray(c[k]) && (c[k] as unknown[]).length));
  return missing.length ? { skip: `its ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set` } : build();
}
const webhook = (type: string) => (c: Obj) => needs(c, ["webhook-url"], () => ok({ channel_type: type, url: str(c["webhook-url"]) }));

/** Gatus provider (alerting.<name>) → the channel it becomes, or why not. */
const PROVIDERS: Record<string, (c: Obj) => Mapped> = {
  slack: webhook("slack"),
  discord: webhook("discord"),
  mattermost: webhook("mattermost"),
  rocketchat: webhook("rocketchat"),
  googlechat: webhook("google_chat"),
  teams: webhook("teams"),
  "teams-workflows": webhook("teams"),
  pagerduty: (c) => needs(c, ["integration-key"], () => ok({ channel_type: "pagerduty", pagerduty_routing_key: str(c["integration-key"]) })),
  opsgenie: (c) => needs(c, ["api-key"], () => ok({ channel_type: "opsgenie", opsgenie_api_key: str(c["api-key"]) })),
  telegram: (c) =>
    needs(c, ["token", "id"], () =>
      ok({ channel_type: "telegram", telegram_bot_token: str(c.token), telegram_chat_id: /^-?\d+$/.test(str(c.id)!) ? Number(c.id) : str(c.id), ...(str(c["api-url"]) ? { url: str(c["api-url"]) } : {}) }, str(c["topic-id"]) ? ["topic id not kept"] : [])),
  email: (c) =>
    needs(c, ["from", "host", "to"], () => {
      const port = Number(c.port) || null;
      // Gatus speaks TLS from the first byte on 465 and upgrades with STARTTLS elsewhere
      return ok({
        channel_type: "email",
        email_to: str(c.to),
        smtp_host: str(c.host),
        smtp_port: port,
        smtp_security: port === 465 ? "tls" : "starttls",
        smtp_user: str(c.username) ?? (str(c.password) ? str(c.from) : null),
        ...(str(c.password) ? { smtp_pass: str(c.password) } : {}),
        smtp_from: str(c.from),
      }, isObj(c.client) && c.client.insecure ? ["client.insecure not kept: Vigil verifies the mail server's certificate"] : []);
    }),
  gotify: (c) => needs(c, ["server-url", "token"], () => ok({ channel_type: "gotify", url: str(c["server-url"]), gotify_token: str(c.token) })),
  ntfy: (c) =>
    needs(c, ["topic"], () => {
      if (str(c.token)) return { skip: "it logs in with a token, and Vigil's ntfy channel sends no credentials" };
      return ok({ channel_type: "ntfy", url: `${(str(c.url) ?? "https://ntfy.sh").replace(/\/+$/, "")}/${encodeURIComponent(str(c.topic)!)}` });
    }),
  pushover: (c) => needs(c, ["application-token", "user-key"], () => ok({ channel_type: "pushover", pushover_token: str(c["application-token"]), pushover_user: str(c["user-key"]) })),
  matrix: (c) =>
    needs(c, ["server-url", "access-token", "internal-room-id"], () => ok({ channel_type: "matrix", url: str(c["server-url"]), matrix_access_token: str(c["access-token"]), matrix_room_id: str(c["internal-room-id"]) })),
  signal: (c) =>
    needs(c, ["api-url", "number", "recipients"], () => ok({ channel_type: "signal", url: str(c["api-url"]), signal_number: str(c.number), signal_recipients: list(c.recipients).map(String) })),
  homeassistant: (c) =>
    needs(c, ["url", "token"], () =>
      ok({ channel_type: "homeassistant", url: str(c.url), homeassistant_token: str(c.token), homeassistant_service: "persistent_notification.create" }, [
        "Gatus fires an event; Vigil calls a service: persistent_notification.create (change it to notify.<your device>)",
      ])),
  custom: (c) =>
    needs(c, ["url"], () => {
      const notes = ["Vigil sends its own JSON payload (README \"Alerts and notification channels\") as a POST, not the custom body"];
      if (isObj(c.headers) && Object.keys(c.headers).length) notes.push("custom headers not kept");
      return ok({ channel_type: "webhook", url: str(c.url) }, notes);
    }),
};

function endpointKind(e: Obj): { kind: EndpointKind; target: string; extra: Obj } | string {
  const url = str(e.url) ?? "";
  if (isObj(e.dns)) {
    const name = str(e.dns["query-name"]);
    if (!name) return "its dns block has no query-name";
    return { kind: "dns", target: name, extra: { dns_record_type: str(e.dns["query-type"])?.toUpperCase() ?? "A", ...(url ? { dns_resolver: url.replace(/^udp:\/\//, "") } : {}) } };
  }
  const m = /^([a-z]+):\/\/(.+)$/i.exec(url);
  if (!m) return `its url "${url}" has no scheme Vigil knows`;
  const scheme = m[1]!.toLowerCase();
  const rest = m[2]!.replace(/\/$/, "");
  switch (scheme) {
    case "http":
    case "https":
      return { kind: "http", target: url, extra: {} };
    case "tcp":
      return { kind: "tcp", target: rest, extra: {} };
    case "icmp":
      return { kind: "ping", target: rest, extra: {} };
    case "ws":
    case "wss":
      return { kind: "websocket", target: url, extra: {} };
    case "grpc":
    case "grpcs":
      return { kind: "grpc", target: rest, extra: { grpc_tls: scheme === "grpcs" } };
    case "tls":
      return { kind: "ssl", target: rest, extra: {} };
    case "starttls":
      return { kind: "smtp", target: rest, extra: { smtp_security: "starttls" } };
    default:
      return `Vigil has no ${scheme} monitor`;
  }
}

const MONITOR_TYPE: Record<EndpointKind, string> = { http: "http", tcp: "tcp", ping: "ping", dns: "dns", websocket: "websocket", grpc: "grpc", ssl: "ssl", smtp: "smtp" };
const DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/** A Gatus maintenance block as window attributes, or why not. */
function maintenanceWindow(m: Obj): Obj | string {
  if (m.enabled === false) return "it is disabled";
  // YAML 1.1 readers take an unquoted 23:00 as the number 1380 (minutes): both forms are read
  const start = typeof m.start === "number" ? `${Math.floor(m.start / 60)}:${m.start % 60}` : str(m.start);
  const hm = /^(\d{1,2}):(\d{2})$/.exec(start ?? "");
  if (!hm || Number(hm[1]) > 23 || Number(hm[2]) > 59) return `its start "${m.start ?? ""}" is not hh:mm`;
  const duration = goDurationMs(m.duration);
  if (!duration) return `its duration "${m.duration ?? ""}" is not a duration such as 1h`;
  const days = list(m.every).map((d) => DAYS.indexOf(String(d).toLowerCase()));
  if (days.includes(-1)) return `its days ${list(m.every).join(", ")} are not all week days`;
  return { timezone: str(m.timezone) ?? "UTC", schedule: `${Number(hm[2])} ${Number(hm[1])} * * ${days.length ? days.join(",") : "*"}`, duration_sec: Math.round(duration / 1000) };
}

/** `allowedEnv`: the variables the file may read from `env` (README "Coming from Gatus"). */
export function planGatusImport(text: string, env: Record<string, string | undefined>, allowedEnv: ReadonlySet<string>): ImportPlan {
  const missing = new Set<string>();
  const expanded = expandEnv(text, env, allowedEnv, missing);
  let doc: unknown;
  try {
    doc = Bun.YAML.parse(expanded);
  } catch (err) {
    throw new GatusFileError(`not valid YAML: ${(err as Error).message}`);
  }
  if (!isObj(doc)) throw new GatusFileError("not a Gatus configuration (no top-level mapping)");
  const names = new NameBook();
  const items: PlannedItem[] = [];
  const notices: string[] = [];
  const alerting = isObj(doc.alerting) ? doc.alerting : {};
  const configured = new Set<string>();

  for (const [provider, config] of Object.entries(alerting)) {
    const notes: string[] = [];
    const item: PlannedItem = { kind: "notification_channel", ref: `alerting.${provider}`, name: names.take("notification_channel", `Gatus ${provider}`, notes), what: `${provider} provider`, attributes: {}, notes };
    const map = PROVIDERS[provider];
    const mapped: Mapped = !map ? { skip: `Vigil has no ${provider} channel` } : isObj(config) ? map(config) : { skip: "its configuration is not a mapping" };
    if ("skip" in mapped) {
      items.push({ ...item, skip: mapped.skip });
      continue;
    }
    configured.add(provider);
    if (isObj(config) && list(config.overrides).length) notes.push("per-group overrides not kept");
    notes.push(...mapped.notes);
    item.attributes = { name: item.name, ...mapped.attributes };
    items.push(item);
  }

  const thresholds = new Set<string>();
  let quietRecovery = false;
  const overrideChannels: PlannedItem[] = [];
  /** an endpoint's alerts as channel refs; overrides become channels of their own */
  let reminders: number[] = [];
  const alertRefs = (endpointName: string, alerts: unknown[], notes: string[]): string[] => {
    const refs: string[] = [];
    reminders = [];
    alerts.filter(isObj).forEach((a, i) => {
      const type = String(a.type ?? "");
      if (a.enabled === false) return void notes.push(`disabled ${type} alert not linked`);
      if (a["failure-threshold"] !== undefined || a["success-threshold"] !== undefined) thresholds.add(`${a["failure-threshold"] ?? 3}/${a["success-threshold"] ?? 2}`);
      if (a["send-on-resolved"] !== true) quietRecovery = true;
      const reminder = goDurationMs(a["minimum-reminder-interval"]);
      if (reminder) reminders.push(Math.min(1440, Math.max(5, Math.round(reminder / 60_000))));
      if (isObj(a["provider-override"]) && PROVIDERS[type]) {
        const base = isObj(alerting[type]) ? (alerting[type] as Obj) : {};
        const oNotes: string[] = [];
        const ref = `endpoint ${endpointName} alert ${i + 1}`;
        const item: PlannedItem = { kind: "notification_channel", ref, name: names.take("notification_channel", `Gatus ${type} (${endpointName})`, oNotes), what: `${type} provider-override`, attributes: {}, notes: oNotes };
        const mapped = PROVIDERS[type]!({ ...base, ...(a["provider-override"] as Obj) });
        if ("skip" in mapped) overrideChannels.push({ ...item, skip: mapped.skip });
        else overrideChannels.push({ ...item, attributes: { name: item.name, ...mapped.attributes }, notes: [...oNotes, ...mapped.notes] });
        refs.push(ref);
      } else if (configured.has(type)) refs.push(`alerting.${type}`);
      else notes.push(`${type} alert not linked: ${PROVIDERS[type] ? `alerting.${type} is not set up or was skipped` : `Vigil has no ${type} channel`}`);
    });
    return refs;
  };

  // Gatus's endpoint groups, by name, in the order they first appear
  const groups = new Map<string, PlannedItem>();
  const groupRef = (name: string) => {
    if (!groups.has(name)) {
      const notes: string[] = [];
      groups.set(name, { kind: "group", ref: `group ${name}`, name: names.take("group", name, notes), what: "endpoint group", attributes: {}, notes });
      groups.get(name)!.attributes = { name: groups.get(name)!.name };
    }
    return `group ${name}`;
  };
  const windows: PlannedItem[] = [];
  const endpointRefs: string[] = [];
  for (const e of list(doc.endpoints).filter(isObj)) {
    const notes: string[] = [];
    const label = str(e.name) ?? "unnamed";
    const ref = `endpoint ${str(e.group) ? `${e.group}/` : ""}${label}`;
    const item: PlannedItem = { kind: "monitor", ref, name: names.take("monitor", label, notes), what: "endpoint", attributes: {}, notes };
    const k = endpointKind(e);
    if (typeof k === "string") {
      items.push({ ...item, skip: k });
      continue;
    }
    item.what = `${k.kind} endpoint`;
    const interval = fitInterval((goDurationMs(e.interval ?? "60s") ?? 60_000) / 1000, notes);
    const client = isObj(e.client) ? e.client : {};
    const a: Obj = { name: item.name, monitor_type: MONITOR_TYPE[k.kind], target: k.target, interval_sec: interval, ...k.extra };
    a.timeout_ms = fitTimeout(goDurationMs(client.timeout ?? "10s") ?? 10_000, interval, notes);
    if (client.insecure === true && ["http", "ssl", "websocket", "grpc", "smtp"].includes(k.kind)) a.tls_verify = false;
    if (e.enabled === false) a.is_paused = true;
    if (k.kind === "http") {
      if (str(e.method)) a.method = str(e.method)!.toUpperCase();
      const headers: Record<string, string> = isObj(e.headers) ? Object.fromEntries(Object.entries(e.headers).map(([h, v]) => [h, String(v)])) : {};
      let body = typeof e.body === "string" && e.body !== "" ? e.body : null;
      if (e.graphql === true && body) {
        body = JSON.stringify({ query: body });
        if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = "application/json";
      }
      if (body) {
        a.api_body = body;
        if (/\[(ENDPOINT_NAME|ENDPOINT_GROUP|ENDPOINT_URL|LOCAL_ADDRESS|RANDOM_STRING_\d+)\]/.test(body)) notes.push("body placeholders such as [ENDPOINT_NAME] are sent as they are");
      }
      if (Object.keys(headers).length) a.api_headers_json = headers;
    } else if (typeof e.body === "string" && e.body !== "") {
      if (k.kind === "websocket") a.ws_send = e.body;
      else notes.push("body not kept: Vigil sends none on this kind of endpoint");
    }
    const c = mapConditions(list(e.conditions), k.kind);
    if (c.codes) {
      if (c.codes.size === 0) c.unsupported.push("the [STATUS] conditions together allow no status code");
      else a.expected_http_codes = codesText(c.codes);
      // a redirect the conditions expect is judged as it comes
      if ([...c.codes].some((x) => x >= 300 && x < 400)) a.follow_redirects = false;
    }
    if (c.maxLatencyMs !== null) a.api_max_latency_ms = c.maxLatencyMs;
    if (c.assertions.length) a.api_json_assertions_json = c.assertions;
    if (c.bodyContains) a.api_expected_body_contains = c.bodyContains;
    if (c.certWarnDays !== null) a.ssl_expiry_warn_days = c.certWarnDays;
    if (c.dnsAnswer) a.dns_expected_answer = c.dnsAnswer;
    if (c.wsExpect) a.ws_expect = c.wsExpect;
    if (k.kind === "http") dropBodyChecksOnHead(a, notes);
    notes.push(...c.notes);
    if (c.unsupported.length) notes.push(`conditions not kept: ${c.unsupported.join(", ")}`);
    if (str(e.group)) item.groupRef = groupRef(str(e.group)!);
    item.attributes = a;
    item.channelRefs = alertRefs(label, list(e.alerts), notes);
    // Gatus reminds per alert; Vigil per monitor, every alert_repeat_minutes: the shortest is kept
    if (reminders.length) a.alert_repeat_minutes = Math.min(...reminders);
    items.push(item);
    endpointRefs.push(ref);
    list(e["maintenance-windows"]).filter(isObj).forEach((m, i) => windows.push(windowItem(names, `endpoint ${label} maintenance ${i + 1}`, `${label} maintenance${i ? ` ${i + 1}` : ""}`, m, [ref])));
  }

  for (const e of list(doc["external-endpoints"]).filter(isObj)) {
    const notes: string[] = [];
    const label = str(e.name) ?? "unnamed";
    const item: PlannedItem = { kind: "monitor", ref: `external endpoint ${label}`, name: names.take("monitor", label, notes), what: "external endpoint", attributes: {}, notes };
    const heartbeat = isObj(e.heartbeat) ? goDurationMs(e.heartbeat.interval) : null;
    const period = heartbeat ? Math.max(10, Math.round(heartbeat / 1000)) : 3600;
    if (!heartbeat) notes.push("it has no heartbeat interval: Vigil expects a push at least every hour");
    item.attributes = { name: item.name, monitor_type: "heartbeat", interval_sec: Math.min(86400, Math.max(10, period)), timeout_ms: 5000, heartbeat_period_sec: period, ...(e.enabled === false ? { is_paused: true } : {}) };
    if (str(e.group)) item.groupRef = groupRef(str(e.group)!);
    item.channelRefs = alertRefs(label, list(e.alerts), notes);
    if (reminders.length) item.attributes.alert_repeat_minutes = Math.min(...reminders);
    items.push(item);
  }

  if (isObj(doc.maintenance)) windows.unshift(windowItem(names, "maintenance", "Gatus maintenance", doc.maintenance, endpointRefs));

  if (missing.size) notices.push(`environment variables ${[...missing].join(", ")} are not set: read as empty, as Gatus does`);
  if (thresholds.size) notices.push(`alert thresholds (failure/success: ${[...thresholds].join(", ")}) are per alert in Gatus; Vigil confirms a failure with one instance-wide number of consecutive failed checks (vigil serve --confirmations, default 2), so they were not imported`);
  if (quietRecovery) notices.push("some alerts had send-on-resolved off: Vigil always tells a channel that alerted of the recovery");
  if (list(doc["external-endpoints"]).length) notices.push("external endpoints became heartbeat monitors with new ping URLs (printed on their lines): push to them instead of Gatus's /api/v1/endpoints/{key}/external; a ping counts as success");
  return {
    source: "gatus",
    header: [`Gatus configuration: ${count(list(doc.endpoints).length, "endpoint")}, ${count(list(doc["external-endpoints"]).length, "external endpoint")}, ${count(Object.keys(alerting).length, "alerting provider")}${isObj(doc.maintenance) ? ", a maintenance window" : ""}`],
    items: [...groups.values(), ...items.filter((i) => i.kind === "notification_channel"), ...overrideChannels, ...items.filter((i) => i.kind !== "notification_channel"), ...windows],
    notices,
  };
}

function windowItem(names: NameBook, ref: string, name: string, m: Obj, monitorRefs: string[]): PlannedItem {
  const notes: string[] = [];
  const item: PlannedItem = { kind: "maintenance_window", ref, name: names.take("maintenance_window", name, notes), what: "maintenance", attributes: {}, notes, monitorRefs };
  const w = maintenanceWindow(m);
  if (typeof w === "string") return { ...item, skip: w };
  item.attributes = { name: item.name, ...w };
  return item;
}
