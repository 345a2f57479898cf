import type { AppContext } from "../context.ts";
import { firstFreeSlug, slugify } from "../domain/slug.ts";
import { challengeName, INSTANCE_HOST_MESSAGE, needsAccessToken, validateStatusPageWrite, type StatusPageAttributes } from "../domain/status-page-schema.ts";
import { notFound, validationError } from "../http/errors.ts";
import { toIso } from "../lib/dates.ts";
import { randomToken } from "../lib/tokens.ts";
import { txtRecords } from "../net/txt-records.ts";
import { externalIdTaken, isExternalIdConflict } from "../store/external-ids.ts";
import * as store from "../store/status-pages.ts";
import type { StatusPageRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import { isOwnHost, newDomainToken } from "./custom-domains.ts";
import type { Item, Listed, PageWindow } from "./items.ts";
import { attributesOf, type WriteInput } from "./write-input.ts";

/**
 * Status pages as their owners edit them, for the API and the dashboard alike: validation
 * (domain/status-page-schema.ts), monitor ownership, instance-wide uniqueness of slug and verified
 * custom domain, generated slugs and access tokens, custom domain verification. What visitors see
 * is public-status.ts.
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
    custom_domain_verified_at: r.custom_domain !== null && r.verified_domain === r.custom_domain ? toIso(r.custom_domain_verified_at) : null,
    custom_domain_verification:
      r.custom_domain !== null && r.custom_domain_token !== null ? { record_type: "TXT", record_name: challengeName(r.custom_domain), record_value: r.custom_domain_token } : null,
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
  // asking for a name another page asks for is allowed: the one whose record proves it first serves it
  if (typeof changes.custom_domain === "string") {
    if (await isOwnHost(ctx, changes.custom_domain)) add("custom_domain", INSTANCE_HOST_MESSAGE);
    else if (await store.statusPageValueTaken(ctx.db, "verified_domain", changes.custom_domain, exceptId)) add("custom_domain", TAKEN);
  }
}

/** A custom domain asked for anew: not verified, with a new value for its TXT record. */
function domainColumns(domain: string | null): store.StatusPageColumns {
  return { verified_domain: null, custom_domain_verified_at: null, custom_domain_token: domain === null ? null : newDomainToken() };
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
      const cols = { ...toColumns(changes), ...domainColumns((changes.custom_domain as string | null) ?? null) } as store.StatusPageColumns & { name: string; slug: string };
      const row = await store.insertStatusPage(ctx.db, { accountId, cols, monitorIds: (changes.monitor_ids as number[]) ?? [], now: ctx.clock.now() });
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
  // sent back as it is (a form does): no new token, and nothing found since asked about again
  if ("custom_domain" in changes && changes.custom_domain === row.custom_domain) delete changes.custom_domain;
  await checkReferences(ctx, accountId, changes, details, id);
  if (Object.keys(details).length) throw validationError(details);
  if (needsAccessToken(changes, current)) changes.access_token = randomToken(24);
  if (Object.keys(changes).length === 0) return present(ctx, row);
  const cols = { ...toColumns(changes), ...("custom_domain" in changes ? domainColumns(changes.custom_domain as string | null) : {}) };
  try {
    const after = await store.updateStatusPage(ctx.db, { accountId, id, cols, monitorIds: changes.monitor_ids as number[] | undefined, now: ctx.clock.now() });
    if (!after) throw notFound("status page");
    return present(ctx, after);
  } catch (err) {
    takenError(err);
  }
}

/** How long the TXT lookup of a verification may take. */
const VERIFY_LOOKUP_MS = 5000;

/**
 * Verifies the page's custom domain (README "Custom domains"): the TXT record at
 * _vigil-challenge.<custom_domain> must hold the page's custom_domain_token. Then the page serves
 * at that name, and no other page may have it. Refused (422, on custom_domain) without a custom
 * domain, for a host name of the instance itself, for a name another page verified, and while the
 * record is missing or the lookup fails. A domain already verified is answered as it is.
 */
export async function verifyCustomDomain(ctx: AppContext, actor: Actor, id: number): Promise<StatusPageItem> {
  const row = await owned(ctx, actor, id);
  const domain = row.custom_domain;
  const token = row.custom_domain_token;
  if (domain === null || token === null) throw validationError({ custom_domain: ["is not set: give the page a custom_domain first"] });
  if (row.verified_domain === domain) return present(ctx, row);
  if (await isOwnHost(ctx, domain)) throw validationError({ custom_domain: [INSTANCE_HOST_MESSAGE] });
  if (await store.statusPageValueTaken(ctx.db, "verified_domain", domain, id)) throw validationError({ custom_domain: [TAKEN] });
  const name = challengeName(domain);
  const found = await txtRecords(name, ctx.config.domainResolver, VERIFY_LOOKUP_MS);
  const log = ctx.log.child("status-pages");
  if (!found.ok) {
    log.info("custom domain not verified: lookup failed", { status_page_id: id, name, reason: found.reason });
    throw validationError({ custom_domain: [`could not be verified: the DNS lookup of the TXT record ${name} failed (${found.reason}); try again later`] });
  }
  if (!found.texts.includes(token)) {
    log.info("custom domain not verified: no such record", { status_page_id: id, name });
    throw validationError({ custom_domain: [`is not verified: no TXT record ${name} holds ${token} (found ${found.texts.length ? found.texts.map((t) => `"${t.slice(0, 80)}"`).join(", ") : "none"}); publish it and try again, DNS changes can take a while to be seen`] });
  }
  try {
    const after = await store.markDomainVerified(ctx.db, { accountId: actor.accountId, id, domain, now: ctx.clock.now() });
    if (!after) throw validationError({ custom_domain: ["changed while it was being verified: try again"] });
    log.info("custom domain verified", { status_page_id: id, domain });
    return present(ctx, after);
  } catch (err) {
    takenError(err);
  }
}

export async function deleteStatusPage(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  if (!(await store.deleteStatusPage(ctx.db, actor.accountId, id))) throw notFound("status page");
}
