import { hashToken, randomToken, safeEqual } from "../lib/tokens.ts";
import type { Db } from "../store/database.ts";
import { deleteExpiredSessions, deleteSession, extendSession, findLiveSession, insertSession, type SessionRecord } from "../store/sessions.ts";

export type { SessionRecord };

/**
 * Dashboard sessions: the cookie holds 256 random bits; the table holds only their SHA-256, so a
 * copy of the database signs nobody in. Sessions slide: each use within the last part of the
 * lifetime pushes the expiry out again (written at most once an hour per session).
 */
export const SESSION_TTL_MS = 30 * 24 * 3_600_000;
const EXTEND_AFTER_MS = 3_600_000;

export interface NewSession {
  /** the cookie value; exists only here */
  id: string;
  csrfToken: string;
  expiresAt: number;
}

export async function startSession(db: Db, userId: number, now: number): Promise<NewSession> {
  const id = randomToken(32);
  const csrfToken = randomToken(32);
  const expiresAt = now + SESSION_TTL_MS;
  await insertSession(db, { idHash: hashToken(id), userId, csrfToken, now, expiresAt });
  return { id, csrfToken, expiresAt };
}

/** The live session for a cookie value, its expiry slid forward; undefined when unknown or expired. */
export async function resumeSession(db: Db, id: string, now: number): Promise<SessionRecord | undefined> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(id)) return undefined;
  const s = await findLiveSession(db, hashToken(id), now);
  if (!s) return undefined;
  const slid = now + SESSION_TTL_MS;
  if (slid - s.expires_at >= EXTEND_AFTER_MS) {
    await extendSession(db, s.id_hash, slid);
    s.expires_at = slid;
  }
  return s;
}

export async function endSession(db: Db, id: string): Promise<void> {
  await deleteSession(db, hashToken(id));
}

/** Deletes the sessions that expired before `now`; returns how many. */
export async function sweepExpiredSessions(db: Db, now: number): Promise<number> {
  return deleteExpiredSessions(db, now);
}

/** The form's token against the session's, in constant time. */
export function csrfMatches(session: { csrf_token: string }, presented: string | null | undefined): boolean {
  return typeof presented === "string" && presented.length > 0 && safeEqual(session.csrf_token, presented);
}
