/**
 * Realistic rows of every kind the Uptime Kuma import reads, written into a Kuma database built
 * from Kuma's own schema (test/helpers/uptime-kuma.ts) with the columns both 1.23 and 2.x have,
 * plus the 2.x-only ones when the version has them. Values look like what Kuma's UI stores.
 */
import type { Database } from "bun:sqlite";
import type { KumaVersion } from "../helpers/uptime-kuma.ts";

type Row = Record<string, string | number | null>;

export function insertRow(db: Database, table: string, row: Row): number {
  const cols = Object.keys(row);
  const r = db.query(`INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...(Object.values(row) as never[]));
  return Number(r.lastInsertRowid);
}

const config = (c: Record<string, unknown>) => JSON.stringify(c);

/** Kuma's notification configs, one per provider Vigil has, and one it has not (LINE Notify). */
export const NOTIFICATIONS: { name: string; config: Record<string, unknown>; isDefault?: boolean; expect: string | null }[] = [
  { name: "Ops Slack", config: { type: "slack", slackwebhookURL: "https://hooks.slack.com/services/T000/B000/XXXX", slackchannel: "#ops" }, isDefault: true, expect: "slack" },
  { name: "Ops Discord", config: { type: "discord", discordWebhookUrl: "https://discord.com/api/webhooks/1/abc" }, expect: "discord" },
  { name: "On-call Telegram", config: { type: "telegram", telegramBotToken: "123456:ABC-telegram", telegramChatID: "-100987654" }, expect: "telegram" },
  { name: "Hook", config: { type: "webhook", webhookURL: "https://hooks.example.com/kuma", webhookContentType: "json" }, expect: "webhook" },
  { name: "Phone ntfy", config: { type: "ntfy", ntfyserverurl: "https://ntfy.sh", ntfytopic: "kuma-alerts", ntfyPriority: 5, ntfyAuthenticationMethod: "none" }, expect: "ntfy" },
  { name: "Private ntfy", config: { type: "ntfy", ntfyserverurl: "https://ntfy.example.com", ntfytopic: "ops", ntfyAuthenticationMethod: "accessToken", ntfyaccesstoken: "tk_x" }, expect: null },
  { name: "Gotify", config: { type: "gotify", gotifyserverurl: "https://gotify.example.com/", gotifyapplicationToken: "AppTok3n", gotifyPriority: 8 }, expect: "gotify" },
  { name: "Pushover", config: { type: "pushover", pushoveruserkey: "uUserKey", pushoverapptoken: "aAppToken" }, expect: "pushover" },
  { name: "Mail", config: { type: "smtp", smtpHost: "smtp.example.com", smtpPort: 587, smtpSecure: false, smtpUsername: "kuma", smtpPassword: "mail-secret", smtpFrom: "Kuma <kuma@example.com>", smtpTo: "ops@example.com", smtpCC: "boss@example.com" }, expect: "email" },
  { name: "Matrix", config: { type: "matrix", homeserverUrl: "https://matrix.example.org", internalRoomId: "!room:example.org", accessToken: "syt_matrix" }, expect: "matrix" },
  { name: "Mattermost", config: { type: "mattermost", mattermostWebhookUrl: "https://chat.example.com/hooks/abc" }, expect: "mattermost" },
  { name: "Rocket", config: { type: "rocket.chat", rocketwebhookURL: "https://rocket.example.com/hooks/id/token" }, expect: "rocketchat" },
  { name: "Google Chat", config: { type: "GoogleChat", googleChatWebhookURL: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t" }, expect: "google_chat" },
  { name: "PagerDuty", config: { type: "PagerDuty", pagerdutyIntegrationKey: "pd-routing-key", pagerdutyIntegrationUrl: "https://events.pagerduty.com/v2/enqueue", pagerdutyPriority: "critical" }, expect: "pagerduty" },
  { name: "Opsgenie", config: { type: "Opsgenie", opsgenieApiKey: "og-key", opsgenieRegion: "eu" }, expect: "opsgenie" },
  { name: "Home", config: { type: "HomeAssistant", homeAssistantUrl: "http://homeassistant.local:8123", longLivedAccessToken: "ha-token", notificationService: "mobile_app_pixel" }, expect: "homeassistant" },
  { name: "Signal", config: { type: "signal", signalURL: "http://signal-api:8080/v2/send", signalNumber: "+4915112345678", signalRecipients: "+4917612345678, +4917612345679" }, expect: "signal" },
  { name: "Apprise", config: { type: "apprise", appriseURL: "tgram://123456:ABC/987654" }, expect: "apprise" },
  { name: "Teams", config: { type: "teams", webhookUrl: "https://example.webhook.office.com/webhookb2/x" }, expect: "teams" },
  { name: "LINE", config: { type: "LineNotify", lineNotifyAccessToken: "line" }, expect: null },
];

export interface KumaFixture {
  monitors: Record<string, number>;
  notifications: Record<string, number>;
}

/**
 * Every kind of row: monitors of each type (and some Vigil cannot take), notifications with their
 * links, a tag, a group monitor, maintenances of each strategy, a status page with two sections and
 * a custom domain. `target` is the http address of a real target the test runs.
 */
export function insertKumaRows(db: Database, version: KumaVersion, target: string): KumaFixture {
  const v2 = version === "2.x";
  insertRow(db, "user", { username: "admin", password: "$2a$10$hash", active: 1, timezone: "Europe/Berlin" });
  // Kuma stores every setting JSON-encoded (Settings.set)
  insertRow(db, "setting", { key: "serverTimezone", value: JSON.stringify("Europe/Paris"), type: "general" });
  const dockerHost = insertRow(db, "docker_host", { user_id: 1, docker_daemon: "/var/run/docker.sock", docker_type: "socket", name: "local" });

  const monitors: Record<string, number> = {};
  const base = { user_id: 1, active: 1, interval: 60, maxretries: 0, weight: 2000, created_date: "2024-05-01 10:00:00" };
  const add = (name: string, row: Row) => (monitors[name] = insertRow(db, "monitor", { ...base, name, ...row }));
  add("Production", { type: "group", description: "customer-facing" });
  add("Databases", { type: "group", parent: monitors.Production! });
  add("API health", {
    type: "http", url: `${target}/health`, method: "POST", body: '{"probe":true}', http_body_encoding: "json", headers: '{"X-Env":"prod"}',
    accepted_statuscodes_json: '["200-299","301"]', ignore_tls: 1, maxredirects: 0, interval: 30, timeout: 12, maxretries: 3,
    auth_method: "basic", basic_auth_user: "probe", basic_auth_pass: "basic-secret", parent: monitors.Production!, description: "the public API",
  });
  add("Homepage", { type: "keyword", url: "https://www.example.com/", keyword: "Welcome", interval: 120, timeout: 48, resend_interval: 10, accepted_statuscodes_json: '["200-299"]', maxredirects: 10 });
  // a keyword on HEAD, which Kuma checks against an empty body: never up there
  add("Head check", { type: "keyword", url: "https://head.example.com/", method: "HEAD", keyword: "Welcome", accepted_statuscodes_json: '["200-299"]', maxredirects: 10 });
  add("Status JSON", { type: "json-query", url: "https://api.example.com/status", json_path: "data.status", expected_value: "ok", accepted_statuscodes_json: '["200-299"]', maxredirects: 10, ...(v2 ? { json_path_operator: "==" } : {}) });
  add("Postgres port", { type: "port", hostname: "db.internal", port: 5432, maxretries: 1 });
  add("Router", { type: "ping", hostname: "router.lan", interval: 20 });
  add("Mail DNS", { type: "dns", hostname: "example.com", dns_resolve_type: "MX", dns_resolve_server: "1.1.1.1", port: 53 });
  if (v2) add("Web DNS", { type: "dns", hostname: "www.example.com", dns_resolve_type: "A", dns_resolve_server: "9.9.9.9", port: 5353, conditions: JSON.stringify([{ type: "expression", variable: "record", operator: "equals", value: "93.184.215.14", andOr: "and" }]) });
  add("Nightly backup", { type: "push", push_token: "kumaPushToken123", interval: 86400 });
  add("Web container", { type: "docker", docker_container: "web", docker_host: dockerHost });
  add("Main DB", { type: "postgres", parent: monitors.Databases!, database_connection_string: "postgres://app:s3cret@db.internal:5432/app?sslmode=require", database_query: "SELECT 1" });
  add("Shop DB", { type: "mysql", database_connection_string: "mysql://shop:myPass@mysql.internal:3306/shop" });
  add("Cache", { type: "redis", database_connection_string: "redis://default:redisPass@cache.internal:6379" });
  add("gRPC", { type: "grpc-keyword", grpc_url: "grpc.internal:50051", grpc_enable_tls: 0, grpc_service_name: "Health", grpc_method: "Check", keyword: "SERVING" });
  add("Game server", { type: "steam", hostname: "game.example.com", port: 27015 });
  add("Broker", { type: "mqtt", hostname: "mqtt.example.com", port: 1883, mqtt_topic: "status" });
  add("Old API", { type: "http", url: "https://old.example.com/", active: 0, accepted_statuscodes_json: '["200-299"]', maxredirects: 10 });
  add("Must be down", { type: "http", url: "https://down.example.com/", upside_down: 1, accepted_statuscodes_json: '["200-299"]', maxredirects: 10 });
  // accepted 3xx codes: judged without following (maxredirects 0), or dropped where Kuma follows redirects
  add("Short link", { type: "http", url: "https://example.com/go", accepted_statuscodes_json: '["301"]', maxredirects: 0 });
  add("Orders webhook", { type: "http", url: "https://orders.example.com/hook", method: "POST", accepted_statuscodes_json: '["200-299","301"]', maxredirects: 10 });
  add("Old shop", { type: "http", url: "https://old-shop.example.com/", accepted_statuscodes_json: '["301-399"]', maxredirects: 10 });
  add("Wide codes", { type: "http", url: "https://wide.example.com/", accepted_statuscodes_json: '["200-499"]', maxredirects: 5 });
  if (v2) {
    add("Mail server", { type: "smtp", hostname: "mail.example.com", port: 587, smtp_security: "starttls" });
    add("Socket", { type: "websocket-upgrade", url: "wss://ws.example.com/socket" });
    add("Token API", { type: "http", url: "https://tok.example.com/", auth_method: "bearer", bearer_token: "bearer-secret", accepted_statuscodes_json: '["200-299"]', maxredirects: 10 });
    // 2.x keeps a port monitor's TLS choice in smtp_security
    add("IMAP port", { type: "port", hostname: "imap.example.com", port: 993, smtp_security: "secure" });
  }

  const tag = insertRow(db, "tag", { name: "env", color: "#059669" });
  const team = insertRow(db, "tag", { name: "team#web", color: "#2563eb" });
  insertRow(db, "monitor_tag", { monitor_id: monitors["API health"]!, tag_id: tag, value: "prod" });
  insertRow(db, "monitor_tag", { monitor_id: monitors["API health"]!, tag_id: team, value: "" });
  insertRow(db, "monitor_tag", { monitor_id: monitors.Homepage!, tag_id: tag, value: "prod" });

  const notifications: Record<string, number> = {};
  for (const n of NOTIFICATIONS) {
    notifications[n.name] = insertRow(db, "notification", { name: n.name, active: 1, user_id: 1, is_default: n.isDefault ? 1 : 0, config: config({ name: n.name, ...n.config, isDefault: !!n.isDefault }) });
  }
  const link = (monitor: string, notification: string) => insertRow(db, "monitor_notification", { monitor_id: monitors[monitor]!, notification_id: notifications[notification]! });
  link("API health", "Ops Slack");
  link("API health", "On-call Telegram");
  link("Nightly backup", "Mail");
  link("Homepage", "LINE");

  const maintenance = (row: Row, monitorNames: string[]) => {
    const id = insertRow(db, "maintenance", { description: "", user_id: 1, active: 1, ...row });
    for (const m of monitorNames) insertRow(db, "monitor_maintenance", { maintenance_id: id, monitor_id: monitors[m]! });
    return id;
  };
  maintenance({ title: "DB upgrade", strategy: "single", start_date: "2099-01-10 02:00:00", end_date: "2099-01-10 04:00:00", timezone: "Europe/Berlin", description: "Postgres 17" }, ["Main DB"]);
  maintenance({ title: "Weekly patching", strategy: "recurring-weekday", weekdays: "[1,3]", start_time: "03:00", end_time: "04:30", cron: "0 3 * * 1,3", duration: 5400, timezone: "UTC" }, ["API health"]);
  maintenance({ title: "Nightly", strategy: "cron", cron: "30 1 * * *", duration: 1800, timezone: "SAME_AS_SERVER" }, ["Homepage"]);
  maintenance({ title: "By hand", strategy: "manual" }, ["Router"]);
  maintenance({ title: "Every three days", strategy: "recurring-interval", interval_day: 3, start_time: "01:00", end_time: "02:00", cron: "0 1 * * *", duration: 3600, timezone: "UTC" }, ["Router"]);
  maintenance({ title: "Last year", strategy: "single", start_date: "2020-01-01 00:00:00", end_date: "2020-01-01 02:00:00", timezone: "UTC" }, ["Router"]);
  maintenance({ title: "Games only", strategy: "single", start_date: "2099-02-01 00:00:00", end_date: "2099-02-01 01:00:00", timezone: "UTC" }, ["Game server"]);
  const pageWindow = maintenance({ title: "Status page work", strategy: "single", start_date: "2099-03-01 00:00:00", end_date: "2099-03-01 01:00:00", timezone: "UTC" }, []);
  // a time zone JSON-encoded, as Kuma stores its settings; dates as Kuma's datetime-local field sends them
  maintenance({ title: "Office network window", strategy: "single", start_date: "2099-04-01T22:00", end_date: "2099-04-02T02:00", timezone: JSON.stringify("Europe/Berlin") }, ["Orders webhook"]);

  // the analytics column is google_analytics_tag_id in 1.23, analytics_id in 2.x
  const page = insertRow(db, "status_page", { slug: "public", title: "Public status", description: "Our services", icon: "/icon.svg", theme: "dark", published: 1, search_engine_index: 1, show_tags: 0, footer_text: "© Example", [v2 ? "analytics_id" : "google_analytics_tag_id"]: "G-12345" });
  insertRow(db, "maintenance_status_page", { maintenance_id: pageWindow, status_page_id: page });
  insertRow(db, "status_page_cname", { status_page_id: page, domain: "status.example.com" });
  const services = insertRow(db, "group", { name: "Services", public: 1, active: 1, weight: 1, status_page_id: page });
  const infra = insertRow(db, "group", { name: "Infrastructure", public: 1, active: 1, weight: 2, status_page_id: page });
  insertRow(db, "monitor_group", { monitor_id: monitors.Homepage!, group_id: services, weight: 2 });
  insertRow(db, "monitor_group", { monitor_id: monitors["API health"]!, group_id: services, weight: 1 });
  insertRow(db, "monitor_group", { monitor_id: monitors["Orders webhook"]!, group_id: services, weight: 3 });
  insertRow(db, "monitor_group", { monitor_id: monitors["Postgres port"]!, group_id: infra, weight: 1 });
  insertRow(db, "monitor_group", { monitor_id: monitors["Game server"]!, group_id: infra, weight: 2 });
  return { monitors, notifications };
}
