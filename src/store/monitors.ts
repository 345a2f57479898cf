import { sql } from "kysely";
import { externalIdIs } from "./external-ids.ts";
import { fixedQuery } from "./fixed-query.ts";
import type { SecretAttribute } from "../domain/monitor-schema.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { MonitorChanges } from "../domain/monitor-validation.ts";
import type { ExpiryMark } from "../domain/expiry-stage.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import type { Db } from "./database.ts";
import { engineOf } from "./engine-of.ts";
import { setEscalationChannels } from "./escalation-channels.ts";
import { setParents } from "./monitor-dependencies.ts";
import { holdGroup } from "./groups.ts";
import { heldByActiveWindows } from "./maintenance-windows.ts";
import { containsText } from "./text-match.ts";
import { insertMonitorEvent } from "./monitor-events.ts";
import { linkDefaultChannels } from "./notification-channels.ts";
import type { MonitorRow, MonitorRowUpdate } from "./tables.ts";

/**
 * Monitor repository for the API: every function is scoped to an account, so a handler cannot
 * read or change another tenant's monitor by forgetting a WHERE clause.
 */
export interface MonitorFilter {
  status?: string;
  type?: string;
  /** substring of the name or target, case-insensitive */
  q?: string;
  /** monitors of this group (monitors_account_group) */
  groupId?: number;
  /** monitors holding every one of these tags (monitor_tags_account_tag, once per tag) */
  tags?: string[];
  /** paused ones only (true) or running ones only (false) */
  paused?: boolean;
  /** these monitors only */
  ids?: number[];
  /** the monitor a configuration file names (monitors_account_external_id) */
  externalId?: string;
  /** in maintenance (its switch, or a window active at `at`) or not, as the dashboard shows it */
  maintenance?: { at: number; held: boolean };
}

/** How a list is ordered: by id (the API), or by name, state or last check (the dashboard), id breaking ties. */
export type MonitorOrder = "id" | "name" | "state" | "last_check";

/**
 * Whether a monitor is in maintenance as domain/display-state.ts decides it: its switch, or a window
 * of the account active at `at`.
 */
function inMaintenance(db: Db, accountId: number, at: number) {
  return sql<boolean>`(${sql.ref("is_in_maintenance")} = 1 or ${sql.ref("id")} in (${heldByActiveWindows(db, accountId, at)}))`;
}

/** The account's monitors that pass `f`, as one query (null: a filter no monitor can pass). */
export function monitorListQuery(db: Db, accountId: number, f: MonitorFilter) {
  let query = db.selectFrom("monitors").where("account_id", "=", accountId);
  if (f.status) query = query.where("last_status", "=", f.status);
  if (f.type) query = query.where("monitor_type", "=", f.type);
  if (f.ids) {
    if (f.ids.length === 0) return null;
    query = query.where("id", "in", f.ids);
  }
  if (f.paused !== undefined) query = query.where("is_paused", "=", f.paused ? 1 : 0);
  if (f.groupId !== undefined) query = query.where("group_id", "=", f.groupId);
  if (f.externalId !== undefined) query = query.where(externalIdIs(f.externalId));
  if (f.maintenance) {
    const held = inMaintenance(db, accountId, f.maintenance.at);
    query = query.where(f.maintenance.held ? held : sql<boolean>`not ${held}`);
  }
  const [firstTag, ...moreTags] = [...new Set(f.tags ?? [])];
  if (firstTag !== undefined) {
    // one list of ids: each tag's monitors (a range of monitor_tags_account_tag), intersected. One IN
    // per tag instead lets SQLite probe the monitors index with every pair of ids from two lists;
    // BENCHMARKS.md has the figures
    const holding = (tag: string) => db.selectFrom("monitor_tags").select("monitor_id").where("account_id", "=", accountId).where("tag", "=", tag);
    query = query.where("id", "in", moreTags.reduce((all, tag) => all.intersect(holding(tag)), holding(firstTag)));
  }
  if (f.q) {
    const q = f.q;
    // no stored text holds a NUL (docs/api-rules.md "Text"), so a search holding one finds nothing
    if (q.includes("\0")) return null;
    if (engineOf(db) === "sqlite") {
      // 3+ characters: the trigram index (monitors_search, migration 010; SQLite FTS5) answers a
      // case-insensitive substring phrase. The search is always one quoted phrase, so nothing in it
      // is FTS syntax (NEAR, AND, *, -, column:). For plain ASCII the index is the whole answer;
      // otherwise the substring test below also runs on its candidates, as the index folds all of
      // Unicode and the search folds A-Z only. Under 3 characters the substring test alone scans.
      const indexed = [...q].length >= 3;
      if (indexed) query = query.where(sql<boolean>`${sql.ref("id")} IN (SELECT rowid FROM monitors_search WHERE monitors_search MATCH ${`"${q.replaceAll('"', '""')}"`})`);
      if (!indexed || !/^[\x20-\x7e]*$/.test(q)) query = query.where((eb) => eb.or([containsText(db, sql.ref("name"), q), containsText(db, sql`coalesce(${sql.ref("target")}, '')`, q)]));
    } else {
      // the pg_trgm indexes on name and target serve containsText's ILIKE
      query = query.where((eb) => eb.or([containsText(db, sql.ref("name"), q), containsText(db, sql.ref("target"), q)]));
    }
  }
  return query;
}

/** `at`: now, when the "state" order reads which maintenance windows are active. */
export async function listMonitors(db: Db, accountId: number, f: MonitorFilter, page: PageWindow, order: MonitorOrder, at: number): Promise<{ rows: MonitorRow[]; total: number }> {
  const query = monitorListQuery(db, accountId, f);
  if (!query) return { rows: [], total: 0 };
  // side by side: on PostgreSQL they run on two pooled connections, so a list costs the slower of
  // the two (the count, for a big account) rather than their sum
  const [{ n }, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    ordered(query.selectAll(), order, inMaintenance(db, accountId, at)).limit(page.limit).offset(page.offset).execute(),
  ]);
  return { rows, total: Number(n) };
}

/** Ids of every monitor that passes `f`, ascending. */
export async function listMonitorIds(db: Db, accountId: number, f: MonitorFilter): Promise<number[]> {
  const query = monitorListQuery(db, accountId, f);
  if (!query) return [];
  return (await query.select("id").orderBy("id").execute()).map((r) => r.id);
}

/**
 * How many of the monitors that pass `f` show each state (domain/display-state.ts): paused ones and
 * those in maintenance (their switch, or a window active at `at`) apart, the others by stored state.
 */
export async function stateCounts(db: Db, accountId: number, f: MonitorFilter, at: number): Promise<{ paused: number; maintenance: number; byStatus: Map<string, number> }> {
  const query = monitorListQuery(db, accountId, f);
  const out = { paused: 0, maintenance: 0, byStatus: new Map<string, number>() };
  if (!query) return out;
  const held = sql<number>`case when ${inMaintenance(db, accountId, at)} then 1 else 0 end`;
  // grouped outside: PostgreSQL does not match a parameterised expression in GROUP BY with the SELECT's
  const shown = query.select(["is_paused", "last_status", held.as("held")]).as("m");
  const rows = await db.selectFrom(shown).select((eb) => ["m.is_paused", "m.held", "m.last_status", eb.fn.countAll<number>().as("n")]).groupBy(["m.is_paused", "m.held", "m.last_status"]).execute();
  for (const r of rows) {
    if (Number(r.is_paused) === 1) out.paused += Number(r.n);
    else if (Number(r.held) === 1) out.maintenance += Number(r.n);
    else out.byStatus.set(r.last_status, (out.byStatus.get(r.last_status) ?? 0) + Number(r.n));
  }
  return out;
}

type ListQuery = NonNullable<ReturnType<typeof monitorListQuery>>;

function ordered<Q extends ReturnType<ListQuery["selectAll"]>>(query: Q, order: MonitorOrder, maintenance: ReturnType<typeof inMaintenance>): Q {
  let q = query;
  // state as a person sees it (domain/display-state.ts): the worst first, maintenance then paused last
  if (order === "state") {
    q = q.orderBy(sql`case when ${sql.ref("is_paused")} = 1 then 5 when ${maintenance} then 4 when ${sql.ref("last_status")} = 'down' then 0 when ${sql.ref("last_status")} = 'degraded' then 1 when ${sql.ref("last_status")} = 'unknown' then 3 else 2 end`) as Q;
  } else if (order === "name") q = q.orderBy(sql`lower(${sql.ref("name")})`).orderBy("name") as Q;
  // the most recent first, never-checked ones last
  else if (order === "last_check") q = q.orderBy(sql`coalesce(${sql.ref("last_checked_at")}, -1)`, "desc") as Q;
  return q.orderBy("id", "asc") as Q;
}

export async function findMonitor(db: Db, accountId: number, id: number): Promise<MonitorRow | undefined> {
  return db.selectFrom("monitors").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

/** Channel ids linked to each monitor, ascending. */
export async function channelIdsByMonitor(db: Db, monitorIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(monitorIds.map((id) => [id, []]));
  if (monitorIds.length === 0) return out;
  const rows = await db.selectFrom("monitor_channels").select(["monitor_id", "channel_id"]).where("monitor_id", "in", monitorIds).orderBy("channel_id").execute();
  for (const r of rows) out.get(r.monitor_id)?.push(r.channel_id);
  return out;
}

/** Tags of each monitor, sorted. */
export async function tagsByMonitor(db: Db, monitorIds: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>(monitorIds.map((id) => [id, []]));
  if (monitorIds.length === 0) return out;
  const rows = await db.selectFrom("monitor_tags").select(["monitor_id", "tag"]).where("monitor_id", "in", monitorIds).execute();
  for (const r of rows) out.get(r.monitor_id)?.push(r.tag);
  for (const tags of out.values()) tags.sort();
  return out;
}

/** Which of `ids` are notification channels of this account. */
export async function ownedChannelIds(db: Db, accountId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom("notification_channels").select("id").where("account_id", "=", accountId).where("id", "in", ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** attributes kept in link tables, not in columns of `monitors` */
const LINK_ATTRIBUTES = new Set(["notification_channel_ids", "depends_on_ids", "escalation_channel_ids", "tags"]);
const BOOLEAN_COLUMNS = new Set(["is_paused", "is_in_maintenance", "synthetic_enabled", "tls_verify", "heartbeat_notify_on_late", "follow_redirects", "grpc_tls", "db_tls"]);
const JSON_COLUMNS = new Set(["regions", "api_json_assertions_json", "api_headers_json", "synthetic_steps_json"]);
const SECRET_COLUMNS: Record<SecretAttribute, keyof MonitorRow & `${string}_enc`> = {
  api_auth_bearer_token: "api_auth_bearer_token_enc",
  api_auth_basic_pass: "api_auth_basic_pass_enc",
  api_auth_api_key_value: "api_auth_api_key_value_enc",
  db_password: "db_password_enc",
};

/** API values → columns: booleans 0/1, JSON as text, secrets sealed (AES-256-GCM) before they reach SQL. */
export function changesToColumns(changes: MonitorChanges, secrets: SecretBox): MonitorRowUpdate {
  const row: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (LINK_ATTRIBUTES.has(key)) continue;
    if (key in SECRET_COLUMNS) row[SECRET_COLUMNS[key as SecretAttribute]] = value === null ? null : secrets.seal(value as string);
    else if (BOOLEAN_COLUMNS.has(key)) row[key] = value ? 1 : 0;
    else if (JSON_COLUMNS.has(key)) row[key] = value === null ? null : JSON.stringify(value);
    else row[key] = value;
  }
  return row as MonitorRowUpdate;
}

export interface NewMonitor {
  accountId: number;
  changes: MonitorChanges;
  now: number;
  heartbeatToken: string | null;
}

/**
 * Inserts a monitor and its channel links in one transaction. next_run_at stays null: the
 * scheduler owns it and picks the monitor up from the `monitor.changed` event. Without
 * `notification_channel_ids` the account's default_for_new_monitors channels are linked.
 */
/**
 * Runs `fn` in a transaction: its own, or the caller's when `db` already is one (the API runs its
 * monitor writes as write-queue jobs, which share one group-committed transaction).
 */
function inTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

export async function insertMonitor(db: Db, secrets: SecretBox, m: NewMonitor): Promise<MonitorRow> {
  const cols = changesToColumns(m.changes, secrets);
  return inTransaction(db, async (trx) => {
    if (typeof m.changes.group_id === "number") await holdGroup(trx, m.accountId, m.changes.group_id);
    const row = await trx
      .insertInto("monitors")
      .values({
        ...(cols as Record<string, unknown>),
        account_id: m.accountId,
        name: m.changes.name as string,
        monitor_type: m.changes.monitor_type as string,
        interval_sec: m.changes.interval_sec as number,
        timeout_ms: m.changes.timeout_ms as number,
        target: (m.changes.target as string | null | undefined) ?? null,
        last_status: "unknown",
        next_run_at: null,
        heartbeat_token: m.heartbeatToken,
        created_at: m.now,
        updated_at: m.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const channelIds = m.changes.notification_channel_ids as number[] | undefined;
    if (channelIds === undefined) await linkDefaultChannels(trx, m.accountId, row.id);
    else await linkChannels(trx, row.id, channelIds);
    await linkAlerting(trx, row.id, m.changes);
    if (m.changes.tags !== undefined) await setTags(trx, m.accountId, row.id, m.changes.tags as string[]);
    return row;
  });
}

async function setTags(db: Db, accountId: number, monitorId: number, tags: string[]): Promise<void> {
  await db.deleteFrom("monitor_tags").where("monitor_id", "=", monitorId).execute();
  if (tags.length) await db.insertInto("monitor_tags").values(tags.map((tag) => ({ monitor_id: monitorId, account_id: accountId, tag }))).execute();
}

async function linkChannels(db: Db, monitorId: number, channelIds: number[]): Promise<void> {
  await db.deleteFrom("monitor_channels").where("monitor_id", "=", monitorId).execute();
  if (channelIds.length) await db.insertInto("monitor_channels").values(channelIds.map((channel_id) => ({ monitor_id: monitorId, channel_id }))).execute();
}

/** The parents and escalation channels a write names, replacing the stored ones. */
async function linkAlerting(db: Db, monitorId: number, changes: MonitorChanges): Promise<void> {
  if (changes.depends_on_ids !== undefined) await setParents(db, monitorId, changes.depends_on_ids as number[]);
  if (changes.escalation_channel_ids !== undefined) await setEscalationChannels(db, monitorId, changes.escalation_channel_ids as number[]);
}

/**
 * Applies validated changes. Pausing clears next_run_at; resuming restarts the state at unknown
 * (docs/monitors.md "Maintenance and pause": a resumed monitor starts over at unknown and is checked
 * at once — the scheduler runs it on the `monitor.changed` event). Neither runs a probe here.
 */
export async function updateMonitor(db: Db, secrets: SecretBox, u: { accountId: number; id: number; changes: MonitorChanges; now: number }): Promise<MonitorRow | undefined> {
  return inTransaction(db, async (trx) => {
    const before = await findMonitor(trx, u.accountId, u.id);
    if (!before) return undefined;
    if (Object.keys(u.changes).length === 0) return before;
    if (typeof u.changes.group_id === "number") await holdGroup(trx, u.accountId, u.changes.group_id);
    const cols: Record<string, unknown> = { ...changesToColumns(u.changes, secrets), updated_at: u.now };
    const pausedNow = u.changes.is_paused;
    if (pausedNow === true && before.is_paused === 0) Object.assign(cols, { next_run_at: null, heartbeat_deadline_at: null });
    if (pausedNow === false && before.is_paused === 1) {
      Object.assign(cols, { last_status: "unknown", state_changed_at: u.now, next_run_at: null, heartbeat_deadline_at: null });
    }
    const after = await trx.updateTable("monitors").set(cols as MonitorRowUpdate).where("id", "=", u.id).where("account_id", "=", u.accountId).returningAll().executeTakeFirstOrThrow();
    if (u.changes.notification_channel_ids !== undefined) await linkChannels(trx, u.id, u.changes.notification_channel_ids as number[]);
    await linkAlerting(trx, u.id, u.changes);
    if (u.changes.tags !== undefined) await setTags(trx, u.accountId, u.id, u.changes.tags as string[]);
    return after;
  });
}

/** Deletes a monitor; checks, incidents, events, region states, status-page and channel links go with it (ON DELETE CASCADE). */
export async function deleteMonitor(db: Db, accountId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom("monitors").where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * Swaps a heartbeat monitor's token and records the rotation on its timeline; the old token stops
 * matching the moment this commits. Returns undefined for a missing, foreign or non-heartbeat monitor.
 */
export async function rotateHeartbeatToken(db: Db, accountId: number, id: number, token: string, now: number): Promise<MonitorRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("monitors")
      .set({ heartbeat_token: token, updated_at: now })
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .where("monitor_type", "=", "heartbeat")
      .returningAll()
      .executeTakeFirst();
    if (row) await insertMonitorEvent(trx, { monitorId: id, kind: "token_rotated", at: now });
    return row;
  });
}

/**
 * Moves a monitor's aggregate state from `from` to `to`; false when it no longer was `from` (a
 * concurrent flip won), so a transition is never written from a state that does not hold.
 */
export async function setMonitorState(db: Db, id: number, from: string, to: string, at: number): Promise<boolean> {
  const r = await db.updateTable("monitors").set({ last_status: to, state_changed_at: at }).where("id", "=", id).where("last_status", "=", from).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * A check of the monitor was recorded: when its latest check ran, and the expiry it saw: a
 * certificate's (ssl_expiry_last_not_after, with its issuer), or for a domain monitor the
 * registration's, which its check carries as ssl_not_after (domain_expires_at).
 */
export async function markMonitorChecked(db: Db, id: number, monitorType: string, lastCheckedAt: number, cert: { notAfter: number | null; issuer: string | null }): Promise<void> {
  const at = lastCheckedAt;
  if (cert.notAfter === null) await markChecked(db, { id, at });
  else if (monitorType === "domain") await markCheckedDomain(db, { id, at, notAfter: cert.notAfter });
  else await markCheckedCert(db, { id, at, notAfter: cert.notAfter, issuer: cert.issuer });
}

const markChecked = fixedQuery((db, v: { id: number; at: number }) => db.updateTable("monitors").set({ last_checked_at: v.at }).where("id", "=", v.id));
const markCheckedDomain = fixedQuery((db, v: { id: number; at: number; notAfter: number }) =>
  db.updateTable("monitors").set({ last_checked_at: v.at, domain_expires_at: v.notAfter }).where("id", "=", v.id),
);
const markCheckedCert = fixedQuery((db, v: { id: number; at: number; notAfter: number; issuer: string | null }) =>
  db.updateTable("monitors").set({ last_checked_at: v.at, ssl_expiry_last_not_after: v.notAfter, ssl_last_issuer: v.issuer }).where("id", "=", v.id),
);

/**
 * Moves the monitor's expiry alert mark from `from` (as read) to `to`; false when it no longer was
 * `from`: another region's result or another instance claimed the stage first, and alerts it.
 */
export async function claimExpiryStage(db: Db, id: number, from: ExpiryMark, to: ExpiryMark): Promise<boolean> {
  let q = db.updateTable("monitors").set({ expiry_alerted_not_after: to.notAfter, expiry_alert_stage: to.stage }).where("id", "=", id).where("expiry_alert_stage", "=", from.stage);
  q = from.notAfter === null ? q.where("expiry_alerted_not_after", "is", null) : q.where("expiry_alerted_not_after", "=", from.notAfter);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
