import { isPrivateAddress } from "../domain/ip-ranges.ts";
import { startDeadline } from "../net/deadline.ts";
import { httpExchange } from "../net/http-exchange.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import type { DeliveryOutcome, SendContext } from "./types.ts";

/** How much of a refusing receiver's body goes into the attempt's error, to say why. */
const ERROR_BODY_CHARS = 200;
/** Said instead of a private receiver's reply. */
export const PRIVATE_REPLY = "(the receiver is on a private address; its reply is not shown)";
/** Bytes of a receiver's answer read at most: only its first words are ever shown. */
const ANSWER_BYTES = 16 * 1024;

/**
 * POSTs (or PUTs, as Matrix wants) one notification through the same guarded connection as the checks (README, Security: a
 * receiver is resolved once, judged by the account's private-target rule, and connected to at that
 * address) and classifies the answer the way Healthchecks does: 2xx delivered; 408, 429 and 5xx
 * temporary (retried, honouring Retry-After); any other 4xx permanent (the receiver will refuse the
 * same request again); 3xx permanent, since re-POSTing to a redirect's target silently changes where
 * alerts go; network failures and timeouts temporary; a refused (private) address permanent.
 *
 * The receiver's answer is quoted in the error (a chat service says why it refused) only when it
 * came from a public address: the text of a service on the operator's own network is not shown.
 */
export async function postHttp(url: string, init: { method?: "POST" | "PUT"; headers: Record<string, string>; body: string | URLSearchParams }, signal: AbortSignal, sc: SendContext): Promise<DeliveryOutcome> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { ok: false, statusCode: null, error: "the channel's URL is not a valid absolute URL", permanent: true };
  }
  const headers: Record<string, string> = { "user-agent": "Vigil-Notifier", ...init.headers };
  if (init.body instanceof URLSearchParams && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
    headers["content-type"] = "application/x-www-form-urlencoded;charset=UTF-8";
  }
  const deadline = startDeadline(sc.timeoutMs, signal);
  let res;
  try {
    res = await httpExchange(
      { method: init.method ?? "POST", url: target, headers, body: String(init.body) },
      { deadline, tlsVerify: true, extraCa: sc.extraCa, blockPrivate: sc.blockPrivateTargets === true, credentialHeaders: [], followRedirects: false, maxBodyBytes: ANSWER_BYTES },
    );
  } catch (err) {
    const f = toProbeFailure(err, target.host);
    if (f.code === "target_blocked") return { ok: false, statusCode: null, error: f.message, permanent: true };
    const why = deadline.timedOut() ? `no answer within ${sc.timeoutMs} ms` : signal.aborted ? "interrupted by shutdown" : `could not connect: ${f.message}`;
    return { ok: false, statusCode: null, error: why, permanent: false };
  } finally {
    deadline.dispose();
  }
  const status = res.status;
  if (status >= 200 && status < 300) return { ok: true, statusCode: status, error: null, permanent: false };
  const snippet = res.body.toString("utf8").replace(/\s+/g, " ").trim().slice(0, ERROR_BODY_CHARS);
  const error = isPrivateAddress(res.resolvedIp) ? `HTTP ${status} ${PRIVATE_REPLY}` : `HTTP ${status}${snippet ? `: ${snippet}` : ""}`;
  if (status >= 300 && status < 400) return { ok: false, statusCode: status, error: `${error} (redirects are not followed; configure the final URL)`, permanent: true };
  const temporary = status >= 500 || status === 408 || status === 429;
  return { ok: false, statusCode: status, error, permanent: !temporary, retryAfterMs: temporary ? parseRetryAfter(res.headers["retry-after"] ?? null, Date.now()) : undefined };
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}
