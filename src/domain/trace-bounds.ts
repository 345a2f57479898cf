/**
 * How much of a synthetic check's trace is stored (README "Security", Limits): a step keeps at most
 * MAX_STEP_BODY_BYTES of its response body, a check at most MAX_TRACE_BYTES of trace, and an account
 * what is left of its hourly budget. A cut trace says so in `truncated` and `reason`, and each step
 * whose body was shortened in `body_truncated`; the check itself (status, latency, error) is whole.
 */
import { MAX_STEPS } from "./synthetic-schema.ts";

/** The most trace one check stores, serialized as UTF-8: local checks and probe peers' alike. */
export const MAX_TRACE_BYTES = 256 * 1024;
/** The most of one step's response body a `full` trace keeps, in UTF-8 bytes. */
export const MAX_STEP_BODY_BYTES = 64 * 1024;

const KIB = 1024;
const CUT = "trace cut: ";

/** A limit a trace is cut to, and how the trace's `reason` names it. */
export interface TraceLimit {
  bytes: number;
  /** completes "over …", e.g. "the 256 KiB one check may store" */
  what: string;
}

export const PER_CHECK_LIMIT: TraceLimit = { bytes: MAX_TRACE_BYTES, what: `the ${MAX_TRACE_BYTES / KIB} KiB one check may store` };

/** Why a step's body was shortened by the probe itself. */
export const STEP_BODY_REASON = `a step keeps at most ${MAX_STEP_BODY_BYTES / KIB} KiB of its response body`;

export interface BoundedTrace {
  trace: Record<string, unknown> | null;
  cut: boolean;
  /** serialized size of `trace` */
  bytes: number;
}

const utf8 = new TextEncoder();
const byteLength = (s: string) => Buffer.byteLength(s, "utf8");
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Serialized size of a trace, as it is stored. */
export function traceBytes(trace: unknown): number {
  return trace === null || trace === undefined ? 0 : byteLength(JSON.stringify(trace));
}

/** The longest start of `text` within `maxBytes` of UTF-8, never splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  if (text.length * 3 <= maxBytes) return text;
  const { read } = utf8.encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

/** `trace` marked as cut for `why`, added to any reason it already gives. */
export function withCutReason<T extends Record<string, unknown>>(trace: T, why: string): T & { truncated: true; reason: string } {
  const prior = typeof trace.reason === "string" && trace.reason.startsWith(CUT) ? trace.reason : null;
  return { ...trace, truncated: true, reason: prior === null ? CUT + why : prior.includes(why) ? prior : `${prior}; ${why}` };
}

/**
 * The trace within `limit`: as it is when it fits; else with its steps' response bodies shortened
 * to share the room left by the rest (short bodies kept whole); else, when even the rest does not
 * fit, an outline of its steps (name, status, latency, error), which is kept whatever its size.
 */
export function boundTrace(trace: unknown, limit: TraceLimit = PER_CHECK_LIMIT): BoundedTrace {
  if (trace === null || trace === undefined) return { trace: null, cut: false, bytes: 0 };
  const bytes = traceBytes(trace);
  if (bytes <= limit.bytes && isRecord(trace)) return { trace, cut: false, bytes };
  const shortened = isRecord(trace) ? shortenBodies(trace, limit) : null;
  if (shortened) return { trace: shortened, cut: true, bytes: traceBytes(shortened) };
  const raw = isRecord(trace) ? trace.steps : undefined;
  const steps = Array.isArray(raw) ? raw.slice(0, MAX_STEPS).map(stepOutline) : [];
  const outline = { truncated: true, reason: `${CUT}over ${limit.what} (it was ${bytes} bytes), so only each step's name, status, latency and error are kept`, steps };
  return { trace: outline, cut: true, bytes: traceBytes(outline) };
}

function shortenBodies(trace: Record<string, unknown>, limit: TraceLimit): Record<string, unknown> | null {
  const steps = trace.steps;
  if (!Array.isArray(steps) || steps.length > MAX_STEPS || !steps.every(isRecord)) return null;
  const bodies = steps.map((s) => (typeof s.body === "string" ? s.body : null));
  const why = `over ${limit.what}, so the steps' response bodies are shortened to fit`;
  const frame = (kept: (string | null)[]) =>
    withCutReason({ ...trace, steps: steps.map((s, i) => (kept[i] === bodies[i] ? s : { ...s, body: kept[i], body_truncated: true })) }, why);
  // every body emptied and marked: the most the rest can cost, whatever is kept of the bodies
  const room = limit.bytes - traceBytes(frame(bodies.map((b) => (b === null ? null : ""))));
  if (room < 0) return null;
  const kept = shareRoom(bodies, room);
  const out = frame(kept);
  return traceBytes(out) <= limit.bytes ? out : null;
}

/** Bodies within `room` serialized bytes together: the shortest kept whole, the rest an equal share. */
function shareRoom(bodies: (string | null)[], room: number): (string | null)[] {
  const cost = (s: string) => byteLength(JSON.stringify(s)) - 2;
  const order = bodies.map((b, i) => ({ i, cost: b === null ? 0 : cost(b) })).sort((a, b) => a.cost - b.cost);
  const share = new Map<number, number>();
  let left = room;
  order.forEach(({ i, cost: c }, n) => {
    const fair = Math.floor(left / (order.length - n));
    const given = Math.min(c, fair);
    share.set(i, given);
    left -= given;
  });
  return bodies.map((b, i) => (b === null ? null : cutSerialized(b, share.get(i)!, cost)));
}

/** The longest start of `text` whose JSON string costs at most `max` bytes (escapes counted). */
function cutSerialized(text: string, max: number, cost: (s: string) => number): string {
  let t = cutUtf8(text, max);
  // escapes cost more than the characters they stand for: shorten in proportion until it fits
  for (let c = cost(t); c > max; c = cost(t)) t = cutUtf8(t, Math.floor((byteLength(t) * max) / c));
  return t;
}

function stepOutline(step: unknown) {
  const s = isRecord(step) ? step : {};
  const text = (v: unknown, max: number) => (typeof v === "string" ? v.slice(0, max) : null);
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  return { name: text(s.name, 200), status: num(s.status), latency_ms: num(s.latency_ms), error: text(s.error, 1000) };
}
