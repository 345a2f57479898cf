/**
 * Reads an Uptime Kuma database (its SQLite file, 1.23 or 2.x) for `vigil import uptime-kuma`
 * (README "Coming from Uptime Kuma"). Kuma may be running on it: the file is opened read-only
 * through SQLite itself, which takes part in the WAL's locking, so the rows still only in the
 * `-wal` file are read, and everything is read in one read transaction (one snapshot). No row of
 * Kuma's is written. When a read-only connection cannot use the WAL (the directory is mounted
 * read-only, so SQLite cannot make the `-shm` index it needs), the database and its WAL are copied
 * to a temporary directory and the copy is read instead: nothing writes to a read-only mount, so
 * the copy is consistent.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type KumaRow = Record<string, unknown>;

/** The tables the import reads, as rows of plain values; a table the version lacks is empty. */
export interface KumaData {
  /** "1.x" (db/patch-*.sql schema) or "2.x" (knex migrations); `schemaMark` names the last patch or migration */
  version: "1.x" | "2.x";
  schemaMark: string | null;
  monitors: KumaRow[];
  notifications: KumaRow[];
  monitorNotifications: KumaRow[];
  tags: KumaRow[];
  monitorTags: KumaRow[];
  dockerHosts: KumaRow[];
  maintenances: KumaRow[];
  monitorMaintenances: KumaRow[];
  maintenanceStatusPages: KumaRow[];
  statusPages: KumaRow[];
  statusPageDomains: KumaRow[];
  groups: KumaRow[];
  monitorGroups: KumaRow[];
  /** Kuma's settings, each value JSON-decoded as Kuma reads it (a time zone is stored as "\"Europe/Berlin\"") */
  settings: Map<string, unknown>;
}

export class KumaFileError extends Error {}

const TABLES = {
  monitors: "monitor",
  notifications: "notification",
  monitorNotifications: "monitor_notification",
  tags: "tag",
  monitorTags: "monitor_tag",
  dockerHosts: "docker_host",
  maintenances: "maintenance",
  monitorMaintenances: "monitor_maintenance",
  maintenanceStatusPages: "maintenance_status_page",
  statusPages: "status_page",
  statusPageDomains: "status_page_cname",
  groups: "group",
  monitorGroups: "monitor_group",
} as const;

function readAll(db: Database): KumaData {
  const tables = new Set((db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
  if (!tables.has("monitor")) throw new KumaFileError("it has no monitor table: not an Uptime Kuma database");
  const rows = (table: string): KumaRow[] => (tables.has(table) ? (db.query(`SELECT * FROM "${table}" ORDER BY id`).all() as KumaRow[]) : []);
  const data = Object.fromEntries(Object.entries(TABLES).map(([key, table]) => [key, rows(table)])) as Omit<KumaData, "version" | "schemaMark" | "settings">;
  const settings = new Map<string, unknown>();
  if (tables.has("setting")) for (const r of db.query("SELECT key, value FROM setting").all() as { key: string; value: string | null }[]) settings.set(r.key, settingValue(r.value));
  const v2 = tables.has("knex_migrations");
  const mark = v2
    ? ((db.query("SELECT name FROM knex_migrations ORDER BY id DESC LIMIT 1").get() as { name: string } | null)?.name ?? null)
    : lastPatch(settings.get("databasePatchedFiles"));
  return { version: v2 ? "2.x" : "1.x", schemaMark: mark, ...data, settings };
}

/** Kuma's Settings.get: the stored JSON's value, or the text itself when it is not JSON. */
function settingValue(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function lastPatch(files: unknown): string | null {
  const names = files && typeof files === "object" ? Object.keys(files) : [];
  return names[names.length - 1] ?? null;
}

function readIn(path: string, readonly: boolean): KumaData {
  const db = readonly ? new Database(path, { readonly: true }) : new Database(path);
  try {
    db.run("PRAGMA query_only = 1");
    // one snapshot: a Kuma writing meanwhile changes nothing of what is read
    db.run("BEGIN");
    try {
      return readAll(db);
    } finally {
      db.run("COMMIT");
    }
  } finally {
    db.close();
  }
}

export function readKumaFile(path: string): KumaData {
  if (!existsSync(path)) throw new KumaFileError(`${path} does not exist`);
  try {
    return readIn(path, true);
  } catch (err) {
    if (err instanceof KumaFileError) throw err;
    if (!existsSync(`${path}-wal`)) throw new KumaFileError(`cannot read ${path} as an SQLite database: ${(err as Error).message}`);
    // a WAL a read-only connection could not open: read a copy of the database with its WAL
    const dir = mkdtempSync(join(tmpdir(), "vigil-kuma-"));
    try {
      const copy = join(dir, "kuma.db");
      copyFileSync(path, copy);
      copyFileSync(`${path}-wal`, `${copy}-wal`);
      return readIn(copy, false);
    } catch (again) {
      if (again instanceof KumaFileError) throw again;
      throw new KumaFileError(`cannot read ${path} as an SQLite database: ${(again as Error).message}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
