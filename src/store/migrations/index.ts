import m001 from "./001-foundation.sql" with { type: "text" };
import m002 from "./002-monitoring.sql" with { type: "text" };
import m010 from "./010-monitor-search.sql" with { type: "text" };
import m011 from "./011-check-blocks.sql" with { type: "text" };
import m012 from "./012-ping-journal.sql" with { type: "text" };
import m013 from "./013-ping-journal-file.sql" with { type: "text" };
import m014 from "./014-account-private-targets.sql" with { type: "text" };
import m015 from "./015-peer-accounts.sql" with { type: "text" };
import m019 from "./019-follow-redirects.sql" with { type: "text" };
import m020 from "./020-open-incidents.sql" with { type: "text" };
import m021 from "./021-check-timings.sql" with { type: "text" };
import m022 from "./022-ping-bodies.sql" with { type: "text" };
import m023 from "./023-instances.sql" with { type: "text" };
import m024 from "./024-monitor-types.sql" with { type: "text" };
import m025 from "./025-expiry-alerts.sql" with { type: "text" };
import m026 from "./026-maintenance-windows.sql" with { type: "text" };
import m029 from "./029-dependencies-escalation.sql" with { type: "text" };
import m030 from "./030-groups-tags-updates.sql" with { type: "text" };
import m033 from "./033-last-latency.sql" with { type: "text" };
import m034 from "./034-subscriptions.sql" with { type: "text" };
import m035 from "./035-external-ids.sql" with { type: "text" };
import m036 from "./036-status-mail-digest.sql" with { type: "text" };
import m037 from "./037-custom-domain-verification.sql" with { type: "text" };
import m038 from "./038-account-limits.sql" with { type: "text" };
import pg023 from "./postgres/023-instances.sql" with { type: "text" };
import pg024 from "./postgres/024-monitor-types.sql" with { type: "text" };
import pg025 from "./postgres/025-expiry-alerts.sql" with { type: "text" };
import pg026 from "./postgres/026-maintenance-windows.sql" with { type: "text" };
import pg029 from "./postgres/029-dependencies-escalation.sql" with { type: "text" };
import pg030 from "./postgres/030-groups-tags-updates.sql" with { type: "text" };
import pg033 from "./postgres/033-last-latency.sql" with { type: "text" };
import pg034 from "./postgres/034-subscriptions.sql" with { type: "text" };
import pg035 from "./postgres/035-external-ids.sql" with { type: "text" };
import pg036 from "./postgres/036-status-mail-digest.sql" with { type: "text" };
import pg037 from "./postgres/037-custom-domain-verification.sql" with { type: "text" };
import pg038 from "./postgres/038-account-limits.sql" with { type: "text" };

/**
 * Forward migrations, in order. A data directory at version N gets N+1.. applied, each in its own
 * transaction. Add a file and a line here; schema.sql must equal the result of all of them.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  { version: 1, name: "foundation", sql: m001 },
  { version: 2, name: "monitoring", sql: m002 },
  // 3-9 were never used (they were held for parallel work that ended up in 010 and later)
  { version: 10, name: "monitor-search", sql: m010 },
  { version: 11, name: "check-blocks", sql: m011 },
  { version: 12, name: "ping-journal", sql: m012 },
  { version: 13, name: "ping-journal-file", sql: m013 },
  { version: 14, name: "account-private-targets", sql: m014 },
  { version: 15, name: "peer-accounts", sql: m015 },
  // 16-18 are held by parallel work (storage, HTTP edge cases, hardening) and land beside this
  { version: 19, name: "follow-redirects", sql: m019 },
  { version: 20, name: "open-incidents", sql: m020 },
  { version: 21, name: "check-timings", sql: m021 },
  { version: 22, name: "ping-bodies", sql: m022 },
  { version: 23, name: "instances", sql: m023 },
  { version: 24, name: "monitor-types", sql: m024 },
  { version: 25, name: "expiry-alerts", sql: m025 },
  { version: 26, name: "maintenance-windows", sql: m026 },
  // 27-28 were held for parallel work that needed no migration in the end
  { version: 29, name: "dependencies-escalation", sql: m029 },
  { version: 30, name: "groups-tags-updates", sql: m030 },
  // 31-32 were held for parallel work that landed as 034 and 035
  { version: 33, name: "last-latency", sql: m033 },
  { version: 34, name: "subscriptions", sql: m034 },
  { version: 35, name: "external-ids", sql: m035 },
  { version: 36, name: "status-mail-digest", sql: m036 },
  { version: 37, name: "custom-domain-verification", sql: m037 },
  { version: 38, name: "account-limits", sql: m038 },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * PostgreSQL's migrations. The first PostgreSQL store was created at version 22 (schema.postgres.sql
 * whole), so its list starts after it: each schema change from 23 on has a file beside its SQLite
 * one, under postgres/, with the same number, and schema.postgres.sql equals version 22 plus them.
 */
export const POSTGRES_BASELINE_VERSION = 22;
export const POSTGRES_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  { version: 23, name: "instances", sql: pg023 },
  { version: 24, name: "monitor-types", sql: pg024 },
  { version: 25, name: "expiry-alerts", sql: pg025 },
  { version: 26, name: "maintenance-windows", sql: pg026 },
  { version: 29, name: "dependencies-escalation", sql: pg029 },
  { version: 30, name: "groups-tags-updates", sql: pg030 },
  { version: 33, name: "last-latency", sql: pg033 },
  { version: 34, name: "subscriptions", sql: pg034 },
  { version: 35, name: "external-ids", sql: pg035 },
  { version: 36, name: "status-mail-digest", sql: pg036 },
  { version: 37, name: "custom-domain-verification", sql: pg037 },
  { version: 38, name: "account-limits", sql: pg038 },
];
