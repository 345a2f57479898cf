/**
 * ICMP echo probe. Tries an unprivileged ICMP datagram socket first (allowed by
 * net.ipv4.ping_group_range), then a raw socket (root or CAP_NET_RAW); when neither opens the
 * check is down with ping_not_permitted rather than crashing. IPv4 and IPv6.
 */
import { randomBytes, randomInt } from "node:crypto";
import { emptyResult, failed } from "../domain/check-result.ts";
import { latencyReason } from "../domain/cert-expiry.ts";
import { elapsedMs, startDeadline, type Deadline } from "../net/deadline.ts";
import { echoRequest, isOurReply, sockaddr, type EchoMatch } from "./icmp-packet.ts";
import { IcmpSocket, type PingMode } from "./icmp-socket.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { resolveHost, stripBrackets } from "../net/resolve-host.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { type Probe } from "./types.ts";

export interface PingOptions {
  /** socket kinds to try, in order; tests pass [] to exercise ping_not_permitted */
  modes: PingMode[];
  /**
   * Test hook: send an IPv4 echo request with a wrong checksum, which the receiving kernel must
   * drop (RFC 1122 §3.2.2), giving a loopback target that never answers.
   */
  corruptChecksum?: boolean;
}

const ERRNO_TEXT: Record<number, string> = { 1: "EPERM", 13: "EACCES", 97: "EAFNOSUPPORT", 93: "EPROTONOSUPPORT", 101: "ENETUNREACH", 113: "EHOSTUNREACH", 22: "EINVAL" };
const errnoName = (e: number) => ERRNO_TEXT[e] ?? `errno ${e}`;

/** Poll cadence: tight at first (loopback and LAN answer in well under a millisecond), then relaxed. */
function nextPollDelay(attempt: number): number {
  return attempt < 20 ? 1 : attempt < 100 ? 5 : 20;
}

function openSocket(modes: PingMode[], v6: boolean): IcmpSocket {
  const why: string[] = [];
  for (const mode of modes) {
    const s = IcmpSocket.open(mode, v6);
    if (s instanceof IcmpSocket) return s;
    why.push(`${mode === "dgram" ? "ICMP datagram socket" : "raw socket"}: ${errnoName(s.errno)}`);
  }
  const detail = why.length ? ` (${why.join("; ")})` : "";
  throw new ProbeFailure(
    "ping_not_permitted",
    `cannot open an ICMP socket${detail}: allow the service's group in net.ipv4.ping_group_range or grant CAP_NET_RAW`,
  );
}

function awaitReply(socket: IcmpSocket, match: EchoMatch, deadline: Deadline, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let attempt = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const finish = (fn: () => void) => {
      if (timer) clearTimeout(timer);
      deadline.signal.removeEventListener("abort", onAbort);
      fn();
    };
    const onAbort = () => finish(() => reject(deadline.failure(what, "ping_timeout")));
    const tick = () => {
      timer = null;
      let found = false;
      try {
        found = socket.receiveReady().some((d) => isOurReply(d, match));
      } catch (err) {
        return finish(() => reject(err));
      }
      if (found) return finish(resolve);
      timer = setTimeout(tick, nextPollDelay(attempt++));
    };
    if (deadline.signal.aborted) return onAbort();
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    tick();
  });
}

export function createPingProbe(options: PingOptions = { modes: ["dgram", "raw"] }): Probe {
  return async (m, ctx) => {
    const checkedAt = ctx.now();
    const host = stripBrackets((m.target ?? "").trim());
    const deadline = startDeadline(m.timeout_ms, ctx.signal, "ping_timeout");
    let socket: IcmpSocket | null = null;
    let resolvedIp: string | null = null;
    try {
      if (!host) throw new ProbeFailure("dns_error", "the target has no host name or IP to ping");
      const target = await resolveHost(host, deadline, ctx.blockPrivateTargets);
      resolvedIp = target.ip;
      const v6 = target.family === 6;
      socket = openSocket(options.modes, v6);
      const match: EchoMatch = {
        v6,
        hasIpHeader: socket.mode === "raw" && !v6,
        // the kernel replaces the identifier on datagram sockets and filters replies for us
        id: socket.mode === "raw" ? randomInt(0, 65536) : null,
        seq: randomInt(0, 65536),
        token: randomBytes(16),
      };
      const packet = echoRequest(v6, match.id ?? 0, match.seq, match.token);
      if (options.corruptChecksum && !v6) packet[2] ^= 0xff;
      const sent = performance.now();
      const err = socket.send(packet, sockaddr(target.ip, v6));
      if (err !== 0) throw new ProbeFailure("connection_error", `cannot send an echo request to ${target.ip} (${errnoName(err)})`);
      await awaitReply(socket, match, deadline, `waiting for an echo reply from ${target.ip}`);
      const latency = elapsedMs(sent);
      const slow = latencyReason(latency, m.api_max_latency_ms);
      return { ...emptyResult(checkedAt), latency_ms: latency, resolved_ip: target.ip, status: slow ? "degraded" : "up", degraded_reason: slow };
    } catch (err) {
      const f = toProbeFailure(err, host);
      return failed(checkedAt, f.code, f.message, { resolved_ip: resolvedIp, ...f.extra });
    } finally {
      socket?.close();
      deadline.dispose();
    }
  };
}

export const pingProbe: Probe = createPingProbe();
