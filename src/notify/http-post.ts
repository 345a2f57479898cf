import { rootCertificates } from "node:tls";
import type { DeliveryOutcome, SendContext } from "./types.ts";

/** How much of a refusing receiver's body goes into the attempt's error, to say why. */
const ERROR_BODY_CHARS = 200;

/**
 * POSTs one notification and classifies the answer the way Healthchecks does: 2xx delivered; 408,
 * 429 and 5xx temporary (retried, honouring Retry-After); any other 4xx permanent (the receiver
 * will refuse the same request again); 3xx permanent, since re-POSTing to a redirect's target
 * silently changes where alerts go; network failures and timeouts temporary.
 */
export async function postHttp(url: string, init: { headers: Record<string, string>; body: string | URLSearchParams }, signal: AbortSignal, sc: SendContext): Promise<DeliveryOutcome> {
  const timeout = AbortSignal.timeout(sc.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "user-agent": "Vigil-Notifier", ...init.headers },
      body: init.body,
      redirect: "manual",
      signal: AbortSignal.any([signal, timeout]),
      // a bare `ca` would replace the system roots, so --extra-ca is added to them (as the probes do)
      ...(sc.extraCa ? { tls: { ca: [...rootCertificates, sc.extraCa] } } : {}),
    } as RequestInit);
  } catch (err) {
    const why = timeout.aborted ? `no answer within ${sc.timeoutMs} ms` : signal.aborted ? "interrupted by shutdown" : `could not connect: ${(err as Error).message}`;
    return { ok: false, statusCode: null, error: why, permanent: false };
  }
  const status = res.status;
  if (status >= 200 && status < 300) {
    await res.body?.cancel().catch(() => {});
    return { ok: true, statusCode: status, error: null, permanent: false };
  }
  const text = await res.text().catch(() => "");
  const snippet = text.replace(/\s+/g, " ").trim().slice(0, ERROR_BODY_CHARS);
  const error = `HTTP ${status}${snippet ? `: ${snippet}` : ""}`;
  if (status >= 300 && status < 400) return { ok: false, statusCode: status, error: `${error} (redirects are not followed; configure the final URL)`, permanent: true };
  const temporary = status >= 500 || status === 408 || status === 429;
  return { ok: false, statusCode: status, error, permanent: !temporary, retryAfterMs: temporary ? parseRetryAfter(res.headers.get("retry-after"), Date.now()) : undefined };
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}
