/**
 * SMTP probe (README "SMTP monitors"): to host[:port] (port 25 unless given), read the 220 banner,
 * EHLO and expect 250; with `smtp_security` starttls, STARTTLS (offered and answered 220), the TLS
 * handshake and EHLO again; with tls, TLS from the first byte. QUIT, then close.
 *
 * Hand-written over node:net/node:tls rather than nodemailer's verify(): that one falls back to HELO
 * when EHLO is refused, hides the server's certificate (its socket is private) and opens its own
 * connections, where we need the judged address, the guard on the socket, the certificate's notAfter
 * even when it is not trusted, and each step's own reply in the message.
 */
import net from "node:net";
import tls, { type TLSSocket } from "node:tls";
import { hostname } from "node:os";
import { emptyResult, failed, type CheckResult, type CheckTimings } from "../domain/check-result.ts";
import { certExpiryVerdict, latencyReason, type WatchedCertificate } from "../domain/cert-expiry.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { elapsedMs, sinceMs, startDeadline, type Deadline } from "../net/deadline.ts";
import { certErrorCode, toProbeFailure } from "../net/net-errors.ts";
import { judgePeerCertificate } from "../net/peer-certificate.ts";
import { resolveHost, splitHostPort } from "../net/resolve-host.ts";
import { judgedTlsOptions } from "../net/tls-options.ts";
import { connectTcp } from "./tcp.ts";
import { type Probe } from "./types.ts";

const DEFAULT_PORT = 25;
/** a reply longer than this is not an SMTP server talking (RFC 5321 replies are a few lines) */
const MAX_REPLY_BYTES = 64 * 1024;
/** how much of a server's reply a message quotes */
const QUOTED_CHARS = 200;
/** how long QUIT's answer is waited for once the check has its verdict */
const QUIT_WAIT_MS = 1000;

/** RFC 5321 wants a domain (or address literal) after EHLO; a machine name that is not one says "vigil". */
function ehloName(): string {
  const name = hostname();
  return /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(name) ? name : "vigil";
}

interface Reply {
  code: number;
  lines: string[];
}

/** The reply as a person reads it in a message: its lines joined, control characters escaped, cut short. */
function quote(reply: Reply | string): string {
  const text = typeof reply === "string" ? reply : reply.lines.join(" / ");
  const cut = text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;
  return JSON.stringify(cut);
}

/**
 * One SMTP conversation: replies read off the current socket (the plain one, then the TLS one after
 * STARTTLS), the deadline's abort ending any wait. Its listeners stay on the socket between reads,
 * so an error that comes while no read waits is kept for the next read rather than lost.
 */
class Conversation {
  private socket: net.Socket | null = null;
  private pending = "";
  private error: Error | null = null;
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(socket: net.Socket, private readonly endpoint: string, private readonly deadline: Deadline) {
    this.use(socket);
  }

  private readonly onData = (chunk: Buffer) => {
    this.pending += chunk.toString("latin1");
    this.wake?.();
  };
  private readonly onError = (err: Error) => {
    this.error ??= err;
    this.wake?.();
  };
  private readonly onClose = () => {
    this.closed = true;
    this.wake?.();
  };

  /** Talks over `socket` from now on; what the old one had buffered is dropped (RFC 3207 4.2: nothing read before TLS counts after it). */
  use(socket: net.Socket): void {
    this.detach();
    this.socket = socket;
    socket.on("data", this.onData);
    socket.on("error", this.onError);
    socket.on("close", this.onClose);
  }

  /** Stops reading the current socket (before TLS takes it over). */
  detach(): void {
    this.socket?.off("data", this.onData);
    this.socket?.off("error", this.onError);
    this.socket?.off("close", this.onClose);
    this.socket = null;
    this.pending = "";
    this.error = null;
    this.closed = false;
  }

  /** The next complete reply (a multi-line reply ends at its "NNN " line), or a failure saying what was awaited. */
  async read(what: string): Promise<Reply> {
    const lines: string[] = [];
    let bytes = 0;
    for (;;) {
      let i: number;
      while ((i = this.pending.indexOf("\n")) >= 0) {
        const line = this.pending.slice(0, i).replace(/\r$/, "");
        this.pending = this.pending.slice(i + 1);
        lines.push(line);
        bytes += i + 1;
        const m = /^([2-5]\d\d)([ -]|$)/.exec(line);
        if (!m) throw new ProbeFailure("smtp_error", `${this.endpoint} answered ${what} with something that is not an SMTP reply: ${quote(line)}`);
        if (m[2] !== "-") return { code: Number(m[1]), lines };
      }
      if (bytes + this.pending.length > MAX_REPLY_BYTES) {
        throw new ProbeFailure("smtp_error", `${this.endpoint} sent more than ${MAX_REPLY_BYTES} bytes for ${what} without ending its reply`);
      }
      if (this.error) throw this.error;
      if (this.closed) throw new ProbeFailure("smtp_error", `${this.endpoint} closed the connection while we waited for ${what}`);
      await this.nextEvent(what);
    }
  }

  async command(line: string, what: string): Promise<Reply> {
    this.socket?.write(`${line}\r\n`);
    return this.read(what);
  }

  private nextEvent(what: string): Promise<void> {
    const { signal } = this.deadline;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.wake = null;
        reject(this.deadline.failure(`waiting for ${what} from ${this.endpoint}`));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.wake = () => {
        this.wake = null;
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
    });
  }
}

/** TLS over an open socket (implicit TLS at once, or after STARTTLS's 220). Never rejects on the certificate: we judge it. */
function upgrade(plain: net.Socket, host: string, endpoint: string, extraCa: string | undefined, deadline: Deadline): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ socket: plain, ...judgedTlsOptions(host, extraCa) });
    const finish = (err: Error | null) => {
      deadline.signal.removeEventListener("abort", onAbort);
      socket.off("secureConnect", onSecure);
      socket.off("error", onError);
      socket.off("close", onClose);
      if (err) {
        socket.destroy();
        reject(err);
      } else resolve(socket);
    };
    const onSecure = () => finish(null);
    const onError = (err: Error & { code?: string }) =>
      finish(err instanceof ProbeFailure || certErrorCode(err.code ?? "") ? err : new ProbeFailure("tls_error", `TLS handshake with ${endpoint} failed (${err.code ?? "error"}: ${err.message})`));
    const onClose = () => finish(new ProbeFailure("tls_error", `${endpoint} closed the connection during the TLS handshake`));
    const onAbort = () => finish(deadline.failure(`during the TLS handshake with ${endpoint}`));
    if (deadline.signal.aborted) return onAbort();
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    socket.once("secureConnect", onSecure);
    socket.once("error", onError);
    socket.once("close", onClose);
  });
}

function want(reply: Reply, code: number, endpoint: string, what: string): void {
  if (reply.code !== code) throw new ProbeFailure("smtp_error", `${endpoint} answered ${what} with ${quote(reply)} instead of ${code}`);
}

/** QUIT, waiting a moment for the 221 so the server ends the session cleanly; never fails. */
async function goodbye(talk: Conversation): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const moment = new Promise<void>((resolve) => (timer = setTimeout(resolve, QUIT_WAIT_MS)));
  await Promise.race([talk.command("QUIT", "the answer to QUIT").catch(() => undefined), moment]);
  clearTimeout(timer);
}

export const smtpProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  const security = m.smtp_security ?? "none";
  const { host, port } = splitHostPort(m.target ?? "", m.port ?? DEFAULT_PORT);
  const endpoint = `${host.includes(":") ? `[${host}]` : host}:${port ?? "?"}`;
  const observed: Partial<CheckResult> = {};
  let socket: net.Socket | null = null;
  try {
    if (!host || port === null || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ProbeFailure("connection_error", `target ${JSON.stringify(m.target)} is not host[:port] with a port from 1 to 65535`);
    }
    const begun = performance.now();
    const target = await resolveHost(host, deadline, ctx.blockPrivateTargets);
    observed.resolved_ip = target.ip;
    const timings: CheckTimings = { dns_ms: target.ip === target.host ? null : sinceMs(begun), connect_ms: null, tls_ms: null, ttfb_ms: null };
    observed.timings = timings;
    const started = performance.now();
    socket = await connectTcp(target, port, ctx.blockPrivateTargets === true, deadline.signal, () => deadline.failure(`connecting to ${endpoint}`));
    timings.connect_ms = sinceMs(begun);

    let talk: Conversation | null = null;
    let watched = null as WatchedCertificate | null;
    /**
     * TLS on the open socket; the certificate is judged at once, before anything is said over it.
     * `socket` becomes the TLS socket here already, so a refused certificate still closes it.
     */
    const secure = async (plain: net.Socket): Promise<TLSSocket> => {
      talk?.detach();
      const tlsSocket = await upgrade(plain, target.host, endpoint, ctx.extraCa, deadline);
      socket = tlsSocket;
      timings.tls_ms = sinceMs(begun);
      const seen = judgePeerCertificate(tlsSocket, target.host, endpoint);
      watched = seen.watched;
      observed.ssl_not_after = watched?.notAfter ?? null;
      observed.ssl_issuer = seen.issuer;
      if (!watched) throw new ProbeFailure("tls_error", `${endpoint} sent no certificate`);
      // expiry is what the warning watches, so it is judged even with tls_verify off (as for ssl monitors)
      const expiry = certExpiryVerdict(watched.notAfter, ctx.now(), m.ssl_expiry_warn_days, watched.name);
      if (expiry.kind === "expired") throw new ProbeFailure("certificate_expired", `${expiry.reason} (${endpoint})`);
      if (m.tls_verify !== false && seen.refusal) throw seen.refusal;
      return tlsSocket;
    };

    if (security === "tls") socket = await secure(socket);
    talk = new Conversation(socket, endpoint, deadline);
    const banner = await talk.read("the banner");
    timings.ttfb_ms = sinceMs(begun);
    want(banner, 220, endpoint, "the connection");
    const name = ehloName();
    const ehlo = await talk.command(`EHLO ${name}`, "EHLO");
    want(ehlo, 250, endpoint, "EHLO");
    if (security === "starttls") {
      const offered = ehlo.lines.slice(1).some((l) => /^\d{3}[ -]STARTTLS\s*$/i.test(l));
      if (!offered) throw new ProbeFailure("smtp_error", `${endpoint} does not offer STARTTLS (its EHLO answer: ${quote(ehlo)})`);
      want(await talk.command("STARTTLS", "STARTTLS"), 220, endpoint, "STARTTLS");
      talk.use((socket = await secure(socket)));
      want(await talk.command(`EHLO ${name}`, "EHLO after STARTTLS"), 250, endpoint, "EHLO after STARTTLS");
    }
    const latency = elapsedMs(started);
    observed.latency_ms = latency;
    // polite, not judged: the check has its answer, and a server slow to say goodbye is not down
    await goodbye(talk);

    const expiry = watched ? certExpiryVerdict(watched.notAfter, ctx.now(), m.ssl_expiry_warn_days, watched.name) : null;
    const reasons = [expiry?.kind === "expiring" ? expiry.reason : null, latencyReason(latency, m.api_max_latency_ms)].filter((r): r is string => r !== null);
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, endpoint);
    return failed(checkedAt, f.code, f.message, { ...observed, ...f.extra });
  } finally {
    socket?.destroy();
    deadline.dispose();
  }
};
