/**
 * Real targets on loopback for probe tests: HTTP(S) servers with per-path routes, a TCP listener,
 * a port with nothing behind it, and a DNS responder (UDP plus TCP on the same port). Every
 * builder returns a `close()`; tests close what they start.
 */
import net from "node:net";
import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import packet, { type Answer, type Packet } from "dns-packet";

export interface RecordedRequest { method: string; path: string; headers: Record<string, string>; body: string }
export type Route = (req: Request) => Response | Promise<Response>;

export interface HttpTarget {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

function serve(routes: Record<string, Route>, tls?: { cert: string; key: string }): Promise<HttpTarget> {
  const requests: RecordedRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      requests.push({ method: req.method, path: url.pathname + url.search, headers: Object.fromEntries(req.headers), body });
      const route = routes[url.pathname];
      return route ? route(new Request(req.url, { method: req.method, headers: req.headers, body: body || undefined })) : new Response("no route", { status: 404 });
    },
  });
  const port = server.port as number;
  return Promise.resolve({
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    requests,
    close: async () => { await server.stop(true); },
  });
}

/** @example const t = await startHttpTarget({ "/ok": () => new Response("fine") }); */
export function startHttpTarget(routes: Record<string, Route>): Promise<HttpTarget> {
  return serve(routes);
}

export function startHttpsTarget(certPath: string, keyPath: string, routes: Record<string, Route>): Promise<HttpTarget> {
  return serve(routes, { cert: readFileSync(certPath, "utf8"), key: readFileSync(keyPath, "utf8") });
}

export interface TcpTarget { port: number; connections(): number; close(): Promise<void> }

/** A TCP listener on loopback (IPv4, or IPv6 with host "::1") that accepts and closes. */
export async function startTcpTarget(host = "127.0.0.1"): Promise<TcpTarget> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    count++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
    s.end();
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, host, () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}

/** A loopback port that was free a moment ago: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** How the DNS responder treats one name. */
export interface DnsBehavior {
  answers?: Answer[];
  rcode?: "NXDOMAIN" | "SERVFAIL" | "REFUSED";
  /** never answer: the probe must time out */
  silent?: boolean;
  /** answer over UDP with TC set and no records; the full answer comes over TCP */
  truncate?: boolean;
  /** wait before answering */
  delayMs?: number;
}

export interface DnsTarget {
  port: number;
  /** "127.0.0.1:<port>", ready for dns_resolver */
  resolver: string;
  queries: { transport: "udp" | "tcp"; name: string; type: string }[];
  close(): Promise<void>;
}

const RCODES = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

function answerFor(query: Packet, zone: Record<string, DnsBehavior>, transport: "udp" | "tcp"): Packet | null {
  const q = query.questions?.[0];
  const b = (q && zone[q.name.toLowerCase()]) ?? { rcode: "NXDOMAIN" as const };
  if (b.silent) return null;
  const truncated = transport === "udp" && b.truncate;
  const rcode = RCODES[b.rcode ?? "NOERROR"];
  return {
    type: "response",
    id: query.id,
    flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (truncated ? packet.TRUNCATED_RESPONSE : 0) | rcode,
    questions: query.questions,
    answers: truncated ? [] : b.answers ?? [],
  };
}

/**
 * @example startDnsTarget({ "a.test": { answers: [{ type: "A", name: "a.test", ttl: 60, data: "10.0.0.1" }] } })
 */
export async function startDnsTarget(zone: Record<string, DnsBehavior>): Promise<DnsTarget> {
  const queries: DnsTarget["queries"] = [];
  const delay = (name: string | undefined) => zone[name?.toLowerCase() ?? ""]?.delayMs ?? 0;
  // UDP and TCP must share one port (TCP fallback asks the same server); retry if TCP finds it taken
  for (let attempt = 0; ; attempt++) {
    const udp = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()));
    const port = udp.address().port;
    const tcpSockets = new Set<net.Socket>();
    const tcp = net.createServer((s) => {
      tcpSockets.add(s);
      s.on("close", () => tcpSockets.delete(s));
      s.on("error", () => {});
      let buf = Buffer.alloc(0);
      s.on("data", (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
        const query = packet.streamDecode(buf);
        queries.push({ transport: "tcp", name: query.questions?.[0]?.name ?? "", type: query.questions?.[0]?.type ?? "" });
        const res = answerFor(query, zone, "tcp");
        if (res) setTimeout(() => s.end(packet.streamEncode(res)), delay(query.questions?.[0]?.name));
      });
    });
    const listening = await new Promise<boolean>((resolve) => {
      tcp.once("error", () => resolve(false));
      tcp.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (!listening) {
      udp.close();
      if (attempt > 20) throw new Error("could not bind UDP and TCP on one port");
      continue;
    }
    udp.on("message", (msg, rinfo) => {
      const query = packet.decode(msg);
      queries.push({ transport: "udp", name: query.questions?.[0]?.name ?? "", type: query.questions?.[0]?.type ?? "" });
      const res = answerFor(query, zone, "udp");
      if (res) setTimeout(() => udp.send(packet.encode(res), rinfo.port, rinfo.address), delay(query.questions?.[0]?.name));
    });
    return {
      port,
      resolver: `127.0.0.1:${port}`,
      queries,
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of tcpSockets) s.destroy();
          udp.close(() => tcp.close(() => resolve()));
        }),
    };
  }
}

export interface BlackholeTarget { port: number; close(): void }

/**
 * A loopback port whose TCP handshakes never complete: a listening socket with backlog 0 that
 * never accepts, its queue filled by one connection, so the kernel drops further SYNs. Made with
 * bun:ffi because node:net always accepts.
 */
export async function startBlackholeTcp(): Promise<BlackholeTarget> {
  const { dlopen, FFIType } = await import("bun:ffi");
  const c = dlopen("libc.so.6", {
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    bind: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    listen: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    getsockname: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  }).symbols;
  const fd = c.socket(2, 1, 0); // AF_INET, SOCK_STREAM
  const sa = new Uint8Array(16);
  new DataView(sa.buffer).setUint16(0, 2, true);
  sa.set([127, 0, 0, 1], 4);
  if (c.bind(fd, sa, 16) !== 0 || c.listen(fd, 0) !== 0) throw new Error("blackhole listener failed");
  c.getsockname(fd, sa, new Uint32Array([16]));
  const port = new DataView(sa.buffer).getUint16(2, false);
  const filler = net.connect({ host: "127.0.0.1", port });
  filler.on("error", () => {});
  await new Promise<void>((resolve) => filler.once("connect", () => resolve()));
  return {
    port,
    close: () => {
      filler.destroy();
      c.close(fd);
    },
  };
}
