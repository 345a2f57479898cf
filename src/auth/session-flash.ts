import type { AppContext } from "../context.ts";
import { deleteKv, listKv, putKv, takeKv } from "../store/kv.ts";

/**
 * The result of a dashboard form, kept for the page the browser is sent to after the POST (303):
 * a new API token shown once, a test notification's answer. Kept server-side per session, so the
 * result never rides in the URL (history, logs, Referer), and in the database, so the GET may land
 * on another instance sharing it. Sealed with the secret box (a token is a secret), read once, and
 * forgotten after FLASH_TTL_MS when never read.
 */
export const FLASH_TTL_MS = 5 * 60_000;
const PREFIX = "web-flash:";

export interface Flash {
  tone: "ok" | "error";
  text: string;
  /** a value shown once, in a field to copy (a new API token) */
  secret?: string;
}

/** Which page shows it: one slot per page and session. */
export type FlashSlot = "tokens" | "channels";

const keyOf = (sessionIdHash: string, slot: FlashSlot) => `${PREFIX}${sessionIdHash}:${slot}`;

export async function putFlash(ctx: AppContext, sessionIdHash: string, slot: FlashSlot, flash: Flash): Promise<void> {
  const until = ctx.clock.now() + FLASH_TTL_MS;
  await putKv(ctx.db, keyOf(sessionIdHash, slot), `${until}.${ctx.secrets.seal(JSON.stringify(flash))}`);
}

/** The slot's flash, removed as it is read; null when there is none or it has expired. */
export async function takeFlash(ctx: AppContext, sessionIdHash: string, slot: FlashSlot): Promise<Flash | null> {
  const stored = await takeKv(ctx.db, keyOf(sessionIdHash, slot));
  if (stored === null) return null;
  const dot = stored.indexOf(".");
  if (Number(stored.slice(0, dot)) <= ctx.clock.now()) return null;
  try {
    return JSON.parse(ctx.secrets.open(stored.slice(dot + 1))) as Flash;
  } catch {
    return null; // sealed under another key (replaced since): nothing to show
  }
}

/** Forgets flashes nobody came back for. */
export async function sweepFlashes(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const stale = (await listKv(ctx.db, PREFIX)).filter((e) => Number(e.value.slice(0, e.value.indexOf("."))) <= now).map((e) => e.key);
  await deleteKv(ctx.db, stale);
  return stale.length;
}
