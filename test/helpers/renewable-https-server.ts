/**
 * An HTTPS server on loopback whose certificate can be replaced while it runs, as an operator
 * renewing a certificate would (node's setSecureContext): the next handshake gets the new one.
 * Answers every request with 200 "ok" and closes, so it serves the ssl probe (the handshake) and
 * the http probe alike.
 */
import { readFileSync } from "node:fs";
import type { AddressInfo, Socket } from "node:net";
import tls from "node:tls";

export interface RenewableHttpsServer {
  port: number;
  /** https://127.0.0.1:<port> */
  url: string;
  /** serves `certPath` from the next handshake on */
  useCert(certPath: string): void;
  stop(): Promise<void>;
}

const ANSWER = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";

export async function startRenewableHttpsServer(certPath: string, keyPath: string): Promise<RenewableHttpsServer> {
  const key = readFileSync(keyPath, "utf8");
  const sockets = new Set<Socket>();
  const server = tls.createServer({ key, cert: readFileSync(certPath, "utf8") }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let head = "";
    // the answer goes out once the request's head is in; a bare handshake (the ssl probe) just closes
    socket.on("data", (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (head.includes("\r\n\r\n")) socket.end(ANSWER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `https://127.0.0.1:${port}`,
    useCert: (path) => server.setSecureContext({ key, cert: readFileSync(path, "utf8") }),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
