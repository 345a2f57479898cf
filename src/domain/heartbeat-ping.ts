/**
 * A heartbeat ping as the intake takes it, what it is answered, and the rules every writer of a
 * ping keeps, whether it writes the ping's rows at once or later (docs/heartbeats.md "Ping URLs",
 * "Answers").
 */

export type PingKind = "ping" | "start" | "fail";

export interface PingRequest {
  monitorId: number;
  /** the token the ping used: a ping that reaches the batch after a rotation is refused */
  token: string;
  kind: PingKind;
  sourceIp: string | null;
  /** the body's first PING_BODY_KEEP bytes as text (domain/ping-body.ts), or null without a body */
  body: string | null;
  /** the body's size as sent */
  bodyBytes: number;
  /** why the job failed (/fail, /<exit-code>) */
  failReason: string | null;
  /** the exit code of /<0-255>, null for the other forms: an exit code is its own verdict */
  exitCode: number | null;
}

export type PingOutcome = { result: "accepted" | "ignored" } | { result: "rejected"; reason: string } | { result: "not_found" };

/** One answer shared by every accepted ping: nearly every ping is one. */
export const ACCEPTED: PingOutcome = Object.freeze({ result: "accepted" });

/** What the intake queues: a ping, taken at `at`, or a deadline to judge (a timer fired, a monitor changed). */
export type HeartbeatOp = { type: "ping"; at: number; ping: PingRequest } | { type: "evaluate"; monitorId: number };

export function opMonitorId(op: HeartbeatOp): number {
  return op.type === "ping" ? op.ping.monitorId : op.monitorId;
}

/** The last ping's time after one at `at`: pings committed out of order never move it back. */
export function laterPing(last: number | null, at: number): number {
  return last === null || at > last ? at : last;
}

/** How long the job ran, when a /start came before this ping. */
export function runDuration(startAt: number | null, at: number): number | null {
  return startAt !== null && at >= startAt ? at - startAt : null;
}
