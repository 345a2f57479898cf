import { randomBytes } from "node:crypto";
import type { AppContext } from "../context.ts";
import { CONFIRM_TTL_MS, confirmMail, normalEmail } from "../domain/status-mail.ts";
import * as store from "../store/status-subscriptions.ts";
import type { PublicStatusPage } from "./public-status.ts";

/**
 * Email subscriptions to status pages (README "Email subscriptions"): offered with --smtp-url and
 * --base-url on pages anyone may read (enabled, public, without an access token), double opt-in,
 * and a token in every mail that ends the subscription in one click. Every link in a mail starts
 * with --base-url: a link made from the request's Host would send whatever host a requester
 * named to someone else's inbox, through the operator's mail server.
 */
export function subscriptionsOffered(ctx: AppContext, page: SubscribablePage): boolean {
  return ctx.config.smtpUrl !== null && ctx.config.baseUrlFixed && openToAll(page);
}

/** Whether the page would offer subscriptions but for --base-url, which the operator has to set first. */
export function subscriptionsNeedBaseUrl(ctx: AppContext, page: SubscribablePage): boolean {
  return ctx.config.smtpUrl !== null && !ctx.config.baseUrlFixed && openToAll(page);
}

type SubscribablePage = Pick<PublicStatusPage, "isEnabled" | "isPublic" | "isTokenProtected">;
const openToAll = (page: SubscribablePage) => page.isEnabled && page.isPublic && !page.isTokenProtected;

/**
 * Queues the confirmation mail of `address` (nothing for a confirmed subscriber). The caller
 * answers the same whatever happened, so the form tells nobody who subscribed; false only for an
 * address that cannot be one.
 */
export async function requestSubscription(ctx: AppContext, page: PublicStatusPage, address: string): Promise<boolean> {
  if (!subscriptionsOffered(ctx, page)) throw new Error("status page subscriptions are not offered here (they need --smtp-url and --base-url)");
  const email = normalEmail(address);
  if (!email) return false;
  const now = ctx.clock.now();
  const words = confirmMail(page.name);
  const token = randomBytes(24).toString("base64url");
  const base = ctx.config.baseUrl;
  const outcome = await store.subscribe(ctx.db, {
    pageId: page.id,
    email,
    token,
    now,
    expiresAt: now + CONFIRM_TTL_MS,
    mail: { ...words, link: (t) => `${base}/s/${page.slug}/confirm?token=${t}` },
  });
  ctx.log.child("status-mail").info("subscription asked", { status_page_id: page.id, outcome });
  return true;
}

export function confirmSubscription(ctx: AppContext, page: PublicStatusPage, token: string): Promise<boolean> {
  return store.confirmSubscriber(ctx.db, page.id, token, ctx.clock.now());
}

export function endSubscription(ctx: AppContext, page: PublicStatusPage, token: string): Promise<boolean> {
  return store.unsubscribe(ctx.db, page.id, token);
}
