import { randomBytes } from "node:crypto";
import type { AppContext } from "../context.ts";
import { isInstanceHost } from "../domain/status-page-schema.ts";
import { getKv, listKv, putKvOnce } from "../store/kv.ts";
import { isVerifiedDomain } from "../store/status-pages.ts";

/**
 * The host names a status page's custom domain may never be (README "Custom domains"): the
 * instance's configured names (--base-url, --heartbeat-url, the machine's, localhost), and every
 * host name a signed-in user reached the dashboard at, remembered in kv as `dashboard-host:<name>`.
 * Without --base-url that is how Vigil learns the name it is really reached by, so no page can
 * claim it and take its front page over.
 */
const DASHBOARD_HOST = "dashboard-host:";
/** Remembered names at most: a signed-in user sending made-up Host headers fills no table. */
const MAX_DASHBOARD_HOSTS = 1000;

/** A new value for the TXT record that proves a custom domain is the page owner's. */
export function newDomainToken(): string {
  return randomBytes(16).toString("hex");
}

/** Whether `host` (lower case, no port, no trailing dot) reaches this instance rather than one page. */
export async function isOwnHost(ctx: AppContext, host: string): Promise<boolean> {
  return isInstanceHost(host, ctx.config.ownHostNames) || (await getKv(ctx.db, DASHBOARD_HOST + host)) !== null;
}

/**
 * Remembers a host name a signed-in user used the dashboard at. A page's verified custom domain is
 * not remembered: its DNS record proved whose it is, and a user of another account signing in
 * there (or sending its name as Host) must not be able to switch the page off; such a user gets
 * the dashboard at its `/` instead (web/service.ts). Returns whether the name needs no more noting.
 */
export async function noteDashboardHost(ctx: AppContext, host: string): Promise<boolean> {
  // no page can have an address or a one-label name (domain/status-page-schema.ts), nor a configured one
  if (!host.includes(".") || /^[\d.]+$/.test(host) || host.includes(":") || isInstanceHost(host, ctx.config.ownHostNames)) return true;
  if ((await getKv(ctx.db, DASHBOARD_HOST + host)) !== null) return true;
  if (await isVerifiedDomain(ctx.db, host)) return false;
  const log = ctx.log.child("web");
  if ((await listKv(ctx.db, DASHBOARD_HOST)).length >= MAX_DASHBOARD_HOSTS) {
    log.warn("dashboard host not remembered: too many already", { host, limit: MAX_DASHBOARD_HOSTS });
    return true;
  }
  await putKvOnce(ctx.db, DASHBOARD_HOST + host, String(ctx.clock.now()));
  log.info("dashboard host remembered: no status page may claim it", { host });
  return true;
}
