/**
 * The connection of one HTTP(S) exchange: a socket to the address resolveHost judged (README,
 * Security: the private-target guard), SNI carrying the name, and the protocol the server took.
 *
 * https offers HTTP/1.1 first: it costs a little less CPU per check than HTTP/2 under Bun (BENCHMARKS.md, "HTTP/1.1
 * or HTTP/2 per check"), and a server that takes both picks by its own order, most often HTTP/2, so
 * offering both at once would not keep HTTP/1.1. A server that speaks only HTTP/2 refuses that
 * handshake with the `no_application_protocol` alert; the connection is then opened again offering
 * HTTP/2 (docs/monitors.md, "HTTP answers").
 */
import net from "node:net";
import tls, { type TLSSocket } from "node:tls";
import { ProbeFailure } from "../domain/check-failure.ts";
import type { CheckTimings } from "../domain/check-result.ts";
import type { Deadline } from "./deadline.ts";
import { certErrorCode, certFailure, toProbeFailure } from "./net-errors.ts";
import { judgePeerCertificate, type PeerCertificateVerdict } from "./peer-certificate.ts";
import { guardSocket, type ResolvedHost } from "./resolve-host.ts";
import { judgedTlsOptions } from "./tls-options.ts";

export type HttpProtocol = "http/1.1" | "h2";

/** What https offers first; the bench offers `["h2"]` to measure that path on a server that takes both. */
const FIRST_OFFER: readonly HttpProtocol[] = ["http/1.1"];
/** What a server that refused FIRST_OFFER is offered next. */
const SECOND_OFFER: readonly HttpProtocol[] = ["h2", "http/1.1"];
const REFUSED_PROTOCOL = "ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL";

export interface ConnectionSpec {
  target: ResolvedHost;
  port: number;
  /** null for plain http */
  tls: { verify: boolean; extraCa?: string; offer?: readonly HttpProtocol[] } | null;
  blockPrivate: boolean;
  deadline: Deadline;
  /** "host:port" as written, for messages */
  endpoint: string;
  /** what the check was doing, for a timeout's message ("waiting for https://…") */
  waitingFor: string;
  timings: CheckTimings;
  /** ms since the hop began */
  since: () => number;
}

export interface HttpConnection {
  socket: net.Socket;
  /** the server's certificate as judgePeerCertificate read it; null over plain http */
  certificate: PeerCertificateVerdict | null;
  protocol: HttpProtocol;
}

/**
 * Opens the connection, and for https the TLS session, within the deadline; with `verify`, a
 * certificate judgePeerCertificate refuses ends it before a byte of the request (and its
 * credentials) goes out. Throws ProbeFailure.
 */
export async function openConnection(spec: ConnectionSpec): Promise<HttpConnection> {
  if (!spec.tls) return { socket: await connectOnce(spec, null), certificate: null, protocol: "http/1.1" };
  const first = spec.tls.offer ?? FIRST_OFFER;
  let socket: TLSSocket;
  try {
    socket = (await connectOnce(spec, first)) as TLSSocket;
  } catch (err) {
    if ((err as { code?: string }).code !== REFUSED_PROTOCOL) throw err;
    socket = (await connectOnce(spec, SECOND_OFFER)) as TLSSocket;
  }
  const certificate = judgePeerCertificate(socket, spec.target.host, spec.endpoint);
  if (spec.tls.verify && certificate.refusal) {
    socket.destroy();
    throw certificate.refusal;
  }
  return { socket, certificate, protocol: socket.alpnProtocol === "h2" ? "h2" : "http/1.1" };
}

/**
 * One attempt: TCP, then TLS offering `offer` (null: plain TCP). Rejects with a ProbeFailure, or
 * with the handshake's own error when the server refused the protocols offered, for the caller to
 * try again.
 */
function connectOnce(spec: ConnectionSpec, offer: readonly HttpProtocol[] | null): Promise<net.Socket> {
  const { target, port, deadline, endpoint, timings, since } = spec;
  return new Promise((resolve, reject) => {
    const socket = offer
      ? tls.connect({ host: target.ip, port, ...judgedTlsOptions(target.host, spec.tls!.extraCa), ALPNProtocols: [...offer] })
      : net.connect({ host: target.ip, port, family: target.family });
    guardSocket(socket, target.host, spec.blockPrivate);
    let tcpUp = false;
    const settle = (fn: () => void) => {
      deadline.signal.removeEventListener("abort", onAbort);
      socket.removeListener("error", onError);
      fn();
    };
    const onAbort = () => settle(() => {
      socket.destroy();
      reject(deadline.failure(spec.waitingFor));
    });
    const onError = (err: Error & { code?: string }) => settle(() => {
      socket.destroy();
      if (err.code === REFUSED_PROTOCOL && offer?.includes("h2") === false) return reject(err);
      // TCP up but no TLS session: the server reset, answered in plain text, or sent a certificate
      // we refuse (each said in its own words)
      const cert = certErrorCode(err.code ?? "") ? certFailure(err.code!, endpoint, target.host) : null;
      const inHandshake = offer !== null && tcpUp && !(err instanceof ProbeFailure) && !cert;
      reject(cert ?? (inHandshake ? new ProbeFailure("tls_error", `TLS handshake with ${endpoint} failed (${err.code ?? "error"}: ${err.message})`) : toProbeFailure(err, endpoint)));
    });
    socket.once("connect", () => {
      tcpUp = true;
      timings.connect_ms = since();
    });
    socket.once(offer ? "secureConnect" : "connect", () => {
      // the guard destroyed a socket that reached an address it refuses: its error follows
      if (socket.destroyed) return;
      settle(() => {
        if (offer) timings.tls_ms = since();
        // errors from here on belong to the request, which listens for them itself
        socket.on("error", () => {});
        resolve(socket);
      });
    });
    socket.on("error", onError);
    if (deadline.signal.aborted) onAbort();
    else deadline.signal.addEventListener("abort", onAbort, { once: true });
  });
}
