import type { AppContext } from "../context.ts";
import { firstFreeSlug, slugify } from "../domain/slug.ts";
import { needsAccessToken, validateStatusPageWrite, type StatusPageAttributes } from "../domain/status-page-schema.ts";
import { notFound, validationError } from "../http/errors.ts";
import { toIso } from "../lib/dates.ts";
import { randomToken } from "../lib/tokens.ts";
import { externalIdTaken, isExternalIdConflict } from "../store/external-ids.ts";
import * as store from "../store/status-pages.ts";
import type { StatusPageRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";
import { attributesOf, type WriteInput } from "./write-input.ts";

/**
 * Status pages as their owners edit them, for the API and the dashboard alike: validation
 * (domain/status-page-schema.ts), monitor ownership, instance-wide uniqueness of slug and custom
 * domain, generated slugs and access tokens. What visitors see is public-status.ts.
 */
export type StatusPageItem = Item<StatusPageAttributes>;

const TAKEN = "has already been taken";

function statusPageAttributes(r: StatusPageRow, monitorIds: number[]): StatusPageAttributes {
  return {
    name: r.name,
    slug: r.slug,
    headline: r.headline,
    description: r.description,
    external_id: r.external_id,
    is_public: r.is_public === 1,
    is_enabled: r.is_enabled === 1,
    is_token_protected: r.is_token_protected === 1,
    access_token: r.access_token,
    public_theme: r.public_theme as StatusPageAttributes["public_theme"],
    custom_domain: r.custom_domain,
    monitor_ids: monitorIds,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

async function present(ctx: AppContext, row: StatusPageRow): Promise<StatusPageItem> {
  const ids = await store.monitorIdsByPage(ctx.db, [row.id]);
  return { id: row.id, attributes: statusPageAttributes(row, ids.get(row.id) ?? []) };
}

function toColumns(changes: Record<string, unknown>): store.StatusPageColumns {
  const cols: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(changes)) {
    if (k === "monitor_ids") continue;
    cols[k] = typeof v === "boolean" ? (v ? 1 : 0) : v;
  }
  return cols as store.StatusPageColumns;
}

/** The checks that need the store: monitor ownership and instance-wide uniqueness. */
async function checkReferences(ctx: AppContext, accountId: number, changes: Record<string, unknown>, details: Record<string, string[]>, exceptId?: number): Promise<void> {
  const add = (k: string, m: string) => void (details[k] ??= []).push(m);
  const ids = changes.monitor_ids as number[] | undefined;
  if (ids?.length) {
    const owned = await store.ownedMonitorIds(ctx.db, accountId, ids);
    const missing = ids.filter((id) => !owned.has(id));
    if (missing.length) add("monitor_ids", `monitor ${missing.join(", ")} ${missing.length === 1 ? "does" : "do"} not exist in this account`);
  }
  // external_id: unique within the account only (README "Configuration as code")
  if (typeof changes.external_id === "string" && (await externalIdTaken(ctx.db, "status_pages", accountId, changes.external_id, exceptId))) add("external_id", TAKEN);
  if (typeof changes.slug === "string" && (await store.statusPageValueTaken(ctx.db, "slug", changes.slug, exceptId))) add("slug", TAKEN);
  if (typeof changes.custom_domain === "string" && (await store.statusPageValueTaken(ctx.db, "custom_domain", changes.custom_domain, exceptId))) add("custom_domain", TAKEN);
}

function takenError(err: unknown): never {
  if (err instanceof store.UniqueValueTaken) throw validationError({ [err.column]: [TAKEN] });
  if (isExternalIdConflict(err)) throw validationError({ external_id: [TAKEN] });
  throw err;
}

async function owned(ctx: AppContext, actor: Actor, id: number): Promise<StatusPageRow> {
  const row = await store.findStatusPage(ctx.db, actor.accountId, id);
  if (!row) throw notFound("status page");
  return row;
}

/** A page of the account's status pages, id ascending; `q` is a substring of the name. */
export async function listStatusPages(ctx: AppContext, actor: Actor, filter: { q?: string; externalId?: string }, window: PageWindow): Promise<Listed<StatusPageAttributes>> {
  const { rows, total } = await store.listStatusPages(ctx.db, actor.accountId, filter, window);
  const ids = await store.monitorIdsByPage(ctx.db, rows.map((r) => r.id));
  return { items: rows.map((r) => ({ id: r.id, attributes: statusPageAttributes(r, ids.get(r.id) ?? []) })), total };
}

export async function getStatusPage(ctx: AppContext, actor: Actor, id: number): Promise<StatusPageItem> {
  return present(ctx, await owned(ctx, actor, id));
}

export async function createStatusPage(ctx: AppContext, actor: Actor, input: WriteInput | undefined): Promise<StatusPageItem> {
  const { accountId } = actor;
  const { changes, details } = validateStatusPageWrite(attributesOf(input, "status_page"), ctx.config);
  await checkReferences(ctx, accountId, changes, details);
  if (Object.keys(details).length) throw validationError(details);
  if (needsAccessToken(changes)) changes.access_token = randomToken(24);
  const explicitSlug = typeof changes.slug === "string";
  // A generated slug that loses a race to a concurrent insert is retried with the next suffix.
  for (let attempt = 0; ; attempt++) {
    if (!explicitSlug) {
      const base = slugify(changes.name as string);
      const slug = firstFreeSlug(base, await store.slugsLike(ctx.db, base));
      if (!slug) throw validationError({ slug: ["could not be generated from name: too many pages share it; send a slug"] });
      changes.slug = slug;
    }
    try {
      const row = await store.insertStatusPage(ctx.db, { accountId, cols: toColumns(changes) as store.StatusPageColumns & { name: string; slug: string }, monitorIds: (changes.monitor_ids as number[]) ?? [], now: ctx.clock.now() });
      return present(ctx, row);
    } catch (err) {
      if (!explicitSlug && attempt < 5 && err instanceof store.UniqueValueTaken && err.column === "slug") continue;
      takenError(err);
    }
  }
}

/** Changes only the attributes given; turning protection on without a token generates one. */
export async function updateStatusPage(ctx: AppContext, actor: Actor, id: number, input: WriteInput | undefined): Promise<StatusPageItem> {
  const { accountId } = actor;
  const row = await owned(ctx, actor, id);
  const current = statusPageAttributes(row, []);
  const { changes, details } = validateStatusPageWrite(attributesOf(input, "status_page", id), ctx.config, current);
  await checkReferences(ctx, accountId, changes, details, id);
  if (Object.keys(details).length) throw validationError(details);
  if (needsAccessToken(changes, current)) changes.access_token = randomToken(24);
  if (Object.keys(changes).length === 0) return present(ctx, row);
  try {
    const after = await store.updateStatusPage(ctx.db, { accountId, id, cols: toColumns(changes), monitorIds: changes.monitor_ids as number[] | undefined, now: ctx.clock.now() });
    if (!after) throw notFound("status page");
    return present(ctx, after);
  } catch (err) {
    takenError(err);
  }
}

export async function deleteStatusPage(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  if (!(await store.deleteStatusPage(ctx.db, actor.accountId, id))) throw notFound("status page");
}
