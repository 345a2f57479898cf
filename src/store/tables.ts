import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";
import type { BucketSummary } from "../domain/uptime.ts";

/**
 * The Database interface Kysely types every query with; it mirrors schema.sql column for column.
 * Times are epoch ms, booleans 0/1, JSON as text.
 */
type Bool = number;

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  plan: "free" | "pro" | "enterprise";
  created_at: number;
  /** null: the instance's --block-private-targets */
  block_private_targets: Bool | null;
  /** null: the plan's default (domain/plan-limits.ts) */
  max_monitors: number | null;
  /** null: the plan's default */
  min_interval_sec: number | null;
}

export interface ApiTokensTable {
  id: Generated<number>;
  account_id: number;
  label: string | null;
  token_hash: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface PeersTable {
  id: Generated<number>;
  region: string;
  label: string | null;
  token_hash: string;
  created_at: number;
  revoked_at: number | null;
  last_seen_at: number | null;
  last_lag_ms: number | null;
  last_skew_ms: number | null;
  queue_length: number | null;
  /** 1: the peer serves every account; 0: only those listed in peer_accounts */
  all_accounts: ColumnType<number, number | undefined, number>;
}

export interface PeerAccountsTable {
  peer_id: number;
  account_id: number;
}

export interface MonitorsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  monitor_type: string;
  target: string | null;
  method: ColumnType<string, string | undefined, string>;
  interval_sec: number;
  timeout_ms: number;
  group_id: number | null;
  is_paused: ColumnType<Bool, Bool | undefined, Bool>;
  is_in_maintenance: ColumnType<Bool, Bool | undefined, Bool>;
  last_status: ColumnType<string, string | undefined, string>;
  last_checked_at: number | null;
  next_run_at: number | null;
  state_changed_at: number | null;
  created_at: number;
  updated_at: number;
  synthetic_trace_body_detail: ColumnType<string, string | undefined, string>;
  regions: string | null;
  editor_ui_profile: string | null;
  port: number | null;
  expected_http_codes: string | null;
  keyword: string | null;
  api_expected_content_type: string | null;
  api_expected_body_contains: string | null;
  api_max_latency_ms: number | null;
  synthetic_enabled: ColumnType<Bool, Bool | undefined, Bool>;
  api_json_assertions_json: string | null;
  api_headers_json: string | null;
  api_body: string | null;
  synthetic_steps_json: string | null;
  api_auth_type: ColumnType<string, string | undefined, string>;
  api_auth_basic_user: string | null;
  api_auth_api_key_header: string | null;
  api_auth_bearer_token_enc: string | null;
  api_auth_basic_pass_enc: string | null;
  api_auth_api_key_value_enc: string | null;
  tls_verify: ColumnType<Bool, Bool | undefined, Bool>;
  ssl_expiry_warn_days: number | null;
  ssl_expiry_last_not_after: number | null;
  dns_record_type: string | null;
  dns_resolver: string | null;
  dns_expected_answer: string | null;
  heartbeat_token: string | null;
  heartbeat_period_sec: number | null;
  heartbeat_grace_sec: number | null;
  heartbeat_notify_on_late: ColumnType<Bool, Bool | undefined, Bool>;
  heartbeat_payload_policy: ColumnType<string, string | undefined, string>;
  heartbeat_payload_status_key: string | null;
  heartbeat_last_ping_at: number | null;
  heartbeat_last_start_at: number | null;
  heartbeat_schedule: string | null;
  heartbeat_timezone: string | null;
  heartbeat_deadline_at: number | null;
  /** the newest ping journal entry folded into this monitor's rows (store/ping-journal.ts) */
  heartbeat_journal_through: Generated<number | null>;
  follow_redirects: ColumnType<Bool, Bool | undefined, Bool>;
  ws_send: string | null;
  ws_expect: string | null;
  grpc_service: string | null;
  grpc_tls: ColumnType<Bool, Bool | undefined, Bool>;
  smtp_security: string | null;
  db_password_enc: string | null;
  db_query: string | null;
  db_tls: ColumnType<Bool, Bool | undefined, Bool>;
  redis_username: string | null;
  docker_host: string | null;
  domain_expiry_warn_days: number | null;
  domain_expires_at: number | null;
  /** issuer (O, else CN) of the certificate the last check saw */
  ssl_last_issuer: Generated<string | null>;
  /** the expiry date and stage (1 warn window, 2 seven days, 3 one day) last alerted as monitor.expiring */
  expiry_alerted_not_after: Generated<number | null>;
  expiry_alert_stage: Generated<number>;
  /** minutes between reminders of an open incident's down alert; null: none */
  alert_repeat_minutes: Generated<number | null>;
  /** minutes after its down alert an open incident escalates; null: never */
  escalate_after_minutes: Generated<number | null>;
  /** README "Configuration as code": optional, unique within the account for this kind of resource. */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MonitorRegionStatesTable {
  monitor_id: number;
  region: string;
  last_status: string;
  last_checked_at: number;
  consecutive_down: number;
  last_check_id: number | null;
  /** latency of the region's last check (null: it had none), for /metrics */
  last_latency_ms: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ChecksTable {
  id: Generated<number>;
  monitor_id: number;
  region: string;
  status: string;
  checked_at: number;
  latency_ms: number | null;
  http_code: number | null;
  error_code: string | null;
  error_message: string | null;
  degraded_reason: string | null;
  resolved_ip: string | null;
  ssl_not_after: number | null;
  dns_answer: string | null;
  synthetic_trace_json: string | null;
  result_uid: string | null;
  dns_ms: Generated<number | null>;
  connect_ms: Generated<number | null>;
  tls_ms: Generated<number | null>;
  ttfb_ms: Generated<number | null>;
}

/** Packed checks (store/check-block-codec.ts); the counts say what `data` holds without unpacking it. */
export interface CheckBlocksTable {
  monitor_id: number;
  block_start: number;
  span: "h" | "d";
  first_at: number;
  up_count: number;
  degraded_count: number;
  down_count: number;
  data: Uint8Array;
}

/** A bucket's figures are the domain's BucketSummary; the table adds what locates the bucket. */
export interface CheckRollupsTable extends BucketSummary {
  monitor_id: number;
  granularity: "h" | "d";
  bucket_start: number;
}

export interface IncidentsTable {
  id: Generated<number>;
  account_id: number;
  monitor_id: number;
  status: "open" | "resolved";
  started_at: number;
  resolved_at: number | null;
  duration_ms: number | null;
  failure_count: number;
  last_error_code: string | null;
  last_error_message: string | null;
  last_http_code: number | null;
  root_check_id: number | null;
  resolved_check_id: number | null;
  created_at: number;
  updated_at: number;
  /** the incident of a monitor it depends on, down when this one opened (engine/dependencies.ts) */
  parent_incident_id: Generated<number | null>;
  /** 1 while its alerts wait for every parent to be up again */
  held_for_parent: Generated<Bool>;
  /** when its down alert went to the escalation channels; they then get its recovery too */
  escalated_at: Generated<number | null>;
}

export interface MonitorEventsTable {
  id: Generated<number>;
  monitor_id: number;
  kind: string;
  at: number;
  result: string | null;
  reason: string | null;
  source_ip: string | null;
  from_state: string | null;
  to_state: string | null;
  duration_ms: number | null;
  body: Generated<string | null>;
  body_bytes: Generated<number | null>;
  /** kind expiring: the expiry date the alert was about */
  expires_at: Generated<number | null>;
}

export interface StatusPagesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  slug: string;
  headline: string | null;
  description: string | null;
  is_public: Bool;
  is_enabled: Bool;
  is_token_protected: Bool;
  access_token: string | null;
  public_theme: string;
  /** custom_domain once verified: the host name the page serves at / (README "Custom domains"); unique */
  verified_domain: string | null;
  created_at: number;
  updated_at: number;
  /** README "Configuration as code": optional, unique within the account for this kind of resource. */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** the host name asked for; several pages may ask for one, the first to verify it serves it */
  custom_domain: string | null;
  /** what the TXT record at _vigil-challenge.<custom_domain> must hold for the page to serve there */
  custom_domain_token: string | null;
  custom_domain_verified_at: number | null;
}

export interface StatusPageMonitorsTable {
  status_page_id: number;
  monitor_id: number;
  position: number;
}

export interface NotificationChannelsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  channel_type: string;
  is_enabled: Bool;
  default_for_new_monitors: Bool;
  config_json: string;
  secrets_enc: string | null;
  created_at: number;
  updated_at: number;
  /** README "Configuration as code": optional, unique within the account for this kind of resource. */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MonitorChannelsTable {
  monitor_id: number;
  channel_id: number;
}

export interface AlertsTable {
  id: Generated<number>;
  account_id: number;
  monitor_id: number | null;
  channel_id: number;
  event: string;
  delivery_id: string;
  payload_json: string;
  status: ColumnType<string, string | undefined, string>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export interface AlertAttemptsTable {
  id: Generated<number>;
  alert_id: number;
  at: number;
  ok: Bool;
  status_code: number | null;
  error: string | null;
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  password_hash: string;
  created_at: number;
}

export interface SessionsTable {
  id_hash: string;
  user_id: number;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface SpoolTable {
  id: Generated<number>;
  result_uid: string;
  payload_json: string;
  created_at: number;
}

export interface PingJournalTable {
  id: number;
  monitor_id: number;
  at: number;
  source_ip: string | null;
  duration_ms: number | null;
  deadline_at: number | null;
}

export interface HeartbeatEpochTable {
  id: number;
  n: number;
}

export interface KvTable {
  key: string;
  value: string;
}

/** A live `vigil serve` on the database (README "Several instances"); written by store/instances.ts. */
export interface InstancesTable {
  id: string;
  region: string;
  host: string;
  pid: number;
  version: string;
  started_at: number;
  renewed_at: number;
  expires_at: number;
}

/** Who holds a once-only role ('leader') until when, by the database's clock; store/instances.ts. */
export interface LeasesTable {
  name: string;
  holder: string;
  acquired_at: number;
  expires_at: number;
}

/**
 * A maintenance window (README "Maintenance windows"): one-off (starts_at, ends_at) or recurring
 * (schedule, duration_sec in timezone). active_from/active_until: its current or next span (null:
 * none); settled_until: the end of the last span the leader acted on. store/maintenance-windows.ts.
 */
export interface MaintenanceWindowsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  description: string | null;
  is_enabled: Bool;
  timezone: string;
  starts_at: number | null;
  ends_at: number | null;
  schedule: string | null;
  duration_sec: number | null;
  active_from: number | null;
  active_until: number | null;
  settled_until: number | null;
  created_at: number;
  updated_at: number;
  /** README "Configuration as code": optional, unique within the account for this kind of resource. */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MaintenanceWindowMonitorsTable {
  window_id: number;
  monitor_id: number;
}

/** A monitor's parents (README "Dependencies, reminders and escalation"); store/monitor-dependencies.ts. */
export interface MonitorDependenciesTable {
  monitor_id: number;
  parent_id: number;
}

/** Where a monitor's open incident escalates; store/escalation-channels.ts. */
export interface MonitorEscalationChannelsTable {
  monitor_id: number;
  channel_id: number;
}

/** An open incident's next reminder and its escalation, each due at a time; store/incident-followups.ts. */
export interface IncidentFollowupsTable {
  incident_id: number;
  kind: "repeat" | "escalate";
  due_at: number;
}

/** Groups of monitors (README "Groups, tags and status page updates"); written by store/groups.ts. */
export interface MonitorGroupsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  description: string | null;
  sort_order: ColumnType<number, number | undefined, number>;
  created_at: number;
  updated_at: number;
  /** README "Configuration as code": optional, unique within the account for this kind of resource. */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A monitor's tags, one row each; written by store/monitors.ts with the monitor. */
export interface MonitorTagsTable {
  monitor_id: number;
  account_id: number;
  tag: string;
}

/** Status page updates written by people; written by store/status-page-updates.ts. */
export interface StatusPageUpdatesTable {
  id: Generated<number>;
  status_page_id: number;
  title: string;
  body: ColumnType<string, string | undefined, string>;
  kind: string;
  status: string | null;
  published_at: number;
  created_at: number;
  updated_at: number;
  /** 1: subscribers are owed a mail of it (published, or its incident status changed) */
  mail_pending: ColumnType<number, number | undefined, number>;
  /** the status the last mail of it said (null: none, or not an incident) */
  mailed_status: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface StatusPageSubscribersTable {
  id: Generated<number>;
  status_page_id: number;
  email: string;
  token: string;
  confirmed_at: number | null;
  confirm_expires_at: number;
  created_at: number;
}

export interface StatusMailQueueTable {
  id: Generated<number>;
  subscriber_id: number;
  subject: string;
  body: string;
  link: string;
  kind: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: number;
  created_at: number;
}

/** An incident opening or resolving on a page's monitor, not yet mailed to the page's subscribers. */
export interface StatusMailChangesTable {
  id: Generated<number>;
  status_page_id: number;
  monitor_id: number;
  at: number;
  /** 1 an incident opened, 0 it resolved */
  is_down: number;
}

export interface StatusPageUpdateMonitorsTable {
  update_id: number;
  monitor_id: number;
}

export interface DB {
  accounts: AccountsTable;
  api_tokens: ApiTokensTable;
  peers: PeersTable;
  peer_accounts: PeerAccountsTable;
  monitors: MonitorsTable;
  monitor_region_states: MonitorRegionStatesTable;
  checks: ChecksTable;
  check_blocks: CheckBlocksTable;
  check_rollups: CheckRollupsTable;
  incidents: IncidentsTable;
  monitor_events: MonitorEventsTable;
  ping_journal: PingJournalTable;
  heartbeat_epoch: HeartbeatEpochTable;
  status_pages: StatusPagesTable;
  status_page_monitors: StatusPageMonitorsTable;
  notification_channels: NotificationChannelsTable;
  monitor_channels: MonitorChannelsTable;
  alerts: AlertsTable;
  alert_attempts: AlertAttemptsTable;
  users: UsersTable;
  sessions: SessionsTable;
  spool: SpoolTable;
  kv: KvTable;
  instances: InstancesTable;
  leases: LeasesTable;
  maintenance_windows: MaintenanceWindowsTable;
  maintenance_window_monitors: MaintenanceWindowMonitorsTable;
  monitor_dependencies: MonitorDependenciesTable;
  monitor_escalation_channels: MonitorEscalationChannelsTable;
  incident_followups: IncidentFollowupsTable;
  monitor_groups: MonitorGroupsTable;
  monitor_tags: MonitorTagsTable;
  status_page_updates: StatusPageUpdatesTable;
  status_page_update_monitors: StatusPageUpdateMonitorsTable;
  status_page_subscribers: StatusPageSubscribersTable;
  status_mail_queue: StatusMailQueueTable;
  status_mail_changes: StatusMailChangesTable;
}

export type Account = Selectable<AccountsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type PeerRow = Selectable<PeersTable>;
export type MonitorRow = Selectable<MonitorsTable>;
export type NewMonitorRow = Insertable<MonitorsTable>;
export type MonitorRowUpdate = Updateable<MonitorsTable>;
export type CheckRow = Selectable<ChecksTable>;
export type IncidentRow = Selectable<IncidentsTable>;
export type MonitorEventRow = Selectable<MonitorEventsTable>;
export type StatusPageRow = Selectable<StatusPagesTable>;
export type NotificationChannelRow = Selectable<NotificationChannelsTable>;
export type AlertRow = Selectable<AlertsTable>;
export type UserRow = Selectable<UsersTable>;
export type MaintenanceWindowRow = Selectable<MaintenanceWindowsTable>;
export type MonitorGroupRow = Selectable<MonitorGroupsTable>;
export type StatusPageUpdateRow = Selectable<StatusPageUpdatesTable>;
