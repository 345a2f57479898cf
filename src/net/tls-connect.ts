/**
 * A TLS connection to the address resolveHost judged, with SNI and the trust store for the target's
 * name, that completes whatever the certificate: the caller judges it (judgePeerCertificate) before
 * it says anything over the connection. Used by the ssl, websocket and redis probes.
 */
import tls, { type TLSSocket } from "node:tls";
import { ProbeFailure } from "../domain/check-failure.ts";
import { certErrorCode } from "./net-errors.ts";
import { guardSocket, type ResolvedHost } from "./resolve-host.ts";
import { judgedTlsOptions } from "./tls-options.ts";

export interface TlsTarget {
  target: ResolvedHost;
  port: number;
  /** how messages name the server */
  endpoint: string;
  extraCa: string | undefined;
  blockPrivate: boolean;
  signal: AbortSignal;
  /** the failure when `signal` aborts; `tcpUp`: whether it came during the handshake */
  onAbort: (tcpUp: boolean) => Error;
  /** told when TCP is up, for the connection's timings */
  onConnect?: () => void;
}

export function connectTls(t: TlsTarget): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: t.target.ip, port: t.port, ...judgedTlsOptions(t.target.host, t.extraCa) });
    guardSocket(socket, t.target.host, t.blockPrivate);
    let tcpUp = false;
    const abort = () => {
      socket.destroy();
      reject(t.onAbort(tcpUp));
    };
    if (t.signal.aborted) return abort();
    t.signal.addEventListener("abort", abort, { once: true });
    socket.once("secureConnect", () => {
      t.signal.removeEventListener("abort", abort);
      resolve(socket);
    });
    socket.once("connect", () => {
      tcpUp = true;
      t.onConnect?.();
    });
    socket.once("error", (err: Error & { code?: string }) => {
      t.signal.removeEventListener("abort", abort);
      socket.destroy();
      // once TCP is up, anything that ends the exchange (a reset, a non-TLS reply) is a TLS failure
      reject(tcpUp && !(err instanceof ProbeFailure) && !certErrorCode(err.code ?? "") ? new ProbeFailure("tls_error", `TLS handshake with ${t.endpoint} failed (${err.code ?? "error"}: ${err.message})`) : err);
    });
  });
}
