/**
 * Ping validity (docs/heartbeats.md "Payload policy"): under `none` every ping with the right token
 * counts; under `status_ok` the body must be JSON whose configured key (dot notation, default
 * `status`) equals the text "ok". A rejected ping is recorded with a reason that says what was
 * wrong, so the person reading the timeline can fix their script.
 */
import { getJsonPath, MISSING } from "./json-path.ts";

export const DEFAULT_STATUS_KEY = "status";

export type PingVerdict = { valid: true } | { valid: false; reason: string };

const VALID: PingVerdict = { valid: true };

/**
 * An exit-code ping (/0) carries its own verdict under every policy, so the `/start` … `/$?` recipe
 * works whatever the monitor's policy (README, Heartbeat monitors): the body of such a ping is
 * usually a log, not the JSON the policy reads.
 */
export function evaluatePingPayload(policy: string, statusKey: string | null, body: string | null, exitCode: number | null = null): PingVerdict {
  if (policy !== "status_ok" || exitCode === 0) return VALID;
  const key = statusKey && statusKey.trim() !== "" ? statusKey.trim() : DEFAULT_STATUS_KEY;
  if (body === null || body.trim() === "") return { valid: false, reason: `no body: policy status_ok expects JSON like {"${key}":"ok"}` };
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return { valid: false, reason: "body is not valid JSON" };
  }
  const value = getJsonPath(doc, key);
  if (value === MISSING) return { valid: false, reason: `key "${key}" is missing from the JSON body` };
  if (value !== "ok") return { valid: false, reason: `key "${key}" is ${shortJson(value)}, expected "ok"` };
  return VALID;
}

function shortJson(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? s.slice(0, 77) + "..." : s;
}
