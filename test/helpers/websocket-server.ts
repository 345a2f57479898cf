/**
 * A WebSocket server on loopback for the websocket probe's tests (and any other test that needs
 * one): Bun.serve with an upgrade on 127.0.0.1, plain or TLS with a certificate from certs.ts, that
 * can refuse the upgrade, greet, echo, close at once, stall, or require a header. Every upgrade's
 * headers and every message received are recorded.
 */
import net from "node:net";
import { readFileSync } from "node:fs";

export interface WebsocketServerOptions {
  /** serve wss:// with this certificate and key (paths, as made by makeCerts) */
  tls?: { certPath: string; keyPath: string };
  /** answer every upgrade request with this status (and a short text body) instead of 101 */
  refuseStatus?: number;
  /** refuse with 401 unless the upgrade request carries this header with this value */
  requireHeader?: { name: string; value: string };
  /** binary messages sent as soon as a client is connected, before the greeting */
  binaryFirst?: number;
  /** a text message sent as soon as a client is connected */
  greeting?: string;
  /** send each text message back, prefixed with "echo: " */
  echo?: boolean;
  /** close each connection right after the upgrade with this code and reason */
  closeOnOpen?: { code: number; reason: string };
  /** wait this long before answering the upgrade (a slow server) */
  upgradeDelayMs?: number;
  /** never answer the upgrade request */
  stall?: boolean;
}

export interface RecordedUpgrade {
  path: string;
  headers: Record<string, string>;
}

export interface WebsocketServer {
  url: string;
  port: number;
  upgrades: RecordedUpgrade[];
  /** text messages received from clients, in order */
  messages: string[];
  /** close codes received from clients */
  closeCodes: number[];
  stop(): Promise<void>;
}

/** @example const ws = await startWebsocketServer({ greeting: "hello" }); ... await ws.stop(); */
export async function startWebsocketServer(o: WebsocketServerOptions = {}): Promise<WebsocketServer> {
  const upgrades: RecordedUpgrade[] = [];
  const messages: string[] = [];
  const closeCodes: number[] = [];
  let release: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (release = resolve));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: o.tls ? { cert: readFileSync(o.tls.certPath, "utf8"), key: readFileSync(o.tls.keyPath, "utf8") } : undefined,
    async fetch(req, srv) {
      const url = new URL(req.url);
      upgrades.push({ path: url.pathname + url.search, headers: Object.fromEntries(req.headers) });
      if (o.stall) {
        await stopped;
        return new Response("stopped", { status: 503 });
      }
      if (o.upgradeDelayMs) await Bun.sleep(o.upgradeDelayMs);
      if (o.refuseStatus) return new Response("upgrade refused by the test server", { status: o.refuseStatus });
      if (o.requireHeader && req.headers.get(o.requireHeader.name) !== o.requireHeader.value) return new Response("missing header", { status: 401 });
      // the first subprotocol offered is the one chosen, as most servers do
      const offered = req.headers.get("sec-websocket-protocol")?.split(",")[0]?.trim();
      const upgraded = srv.upgrade(req, { headers: offered ? { "Sec-WebSocket-Protocol": offered } : undefined });
      return upgraded ? undefined : new Response("not a websocket request", { status: 400 });
    },
    websocket: {
      open(ws) {
        if (o.closeOnOpen) return ws.close(o.closeOnOpen.code, o.closeOnOpen.reason);
        for (let i = 0; i < (o.binaryFirst ?? 0); i++) ws.send(new Uint8Array([1, 2, 3]));
        if (o.greeting !== undefined) ws.send(o.greeting);
      },
      message(ws, data) {
        if (typeof data !== "string") return;
        messages.push(data);
        if (o.echo) ws.send(`echo: ${data}`);
      },
      close(_ws, code) {
        closeCodes.push(code);
      },
    },
  });
  const port = server.port as number;
  return {
    url: `${o.tls ? "wss" : "ws"}://127.0.0.1:${port}`,
    port,
    upgrades,
    messages,
    closeCodes,
    stop: async () => {
      release();
      await server.stop(true);
    },
  };
}

/**
 * A TCP server that answers every connection with `answer` (raw bytes of an HTTP response) and
 * keeps it open: for upgrade answers Bun.serve will not give, such as a 101 whose
 * Sec-WebSocket-Accept is wrong.
 */
export async function startRawAnswerServer(answer: string): Promise<{ port: number; stop(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
    s.once("data", () => s.write(answer));
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    stop: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}
