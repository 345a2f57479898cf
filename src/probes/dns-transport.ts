/**
 * DNS over UDP with a TCP retry when the answer is truncated (RFC 1035 §4.2, RFC 7766). Queries are
 * built and parsed with dns-packet; no system resolver is involved, so the configured server is the
 * one actually asked.
 */
import dgram from "node:dgram";
import net from "node:net";
import { readFile } from "node:fs/promises";
import { randomInt } from "node:crypto";
import packet, { type Packet } from "dns-packet";
import type { Deadline } from "../net/deadline.ts";
import { splitHostPort } from "../net/resolve-host.ts";

export interface Resolver { host: string; port: number }

/** UDP retransmission interval: lost datagrams are normal, one lost packet should not fail a check. */
const RETRANSMIT_MS = 1000;

/** "ip", "ip:port", "[v6]:port" → resolver; port 53 when absent. */
export function parseResolver(spec: string): Resolver {
  const { host, port } = splitHostPort(spec, 53);
  return { host, port: port ?? 53 };
}

/** The system's first nameserver (the default dns_resolver: docs/monitors.md), else 127.0.0.1. */
export async function systemResolver(path = "/etc/resolv.conf"): Promise<Resolver> {
  try {
    const text = await readFile(path, "utf8");
    const m = /^\s*nameserver\s+(\S+)/m.exec(text);
    // scoped IPv6 (fe80::1%eth0) keeps its zone; dgram understands it
    if (m) return { host: m[1], port: 53 };
  } catch {
    // no resolv.conf (containers, Windows): fall through
  }
  return { host: "127.0.0.1", port: 53 };
}

export function buildQuery(name: string, type: string): Packet {
  return { type: "query", id: randomInt(0, 65536), flags: packet.RECURSION_DESIRED, questions: [{ type, name }] };
}

export function queryUdp(server: Resolver, query: Packet, deadline: Deadline): Promise<Packet> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(server.host) ? "udp6" : "udp4");
    const wire = packet.encode(query);
    let timer: ReturnType<typeof setInterval> | null = null;
    let settled = false;
    const done = (fn: () => void) => {
      // a late send callback or message must not close the socket twice (that throws)
      if (settled) return;
      settled = true;
      if (timer) clearInterval(timer);
      deadline.signal.removeEventListener("abort", onAbort);
      socket.close();
      fn();
    };
    const onAbort = () => done(() => reject(deadline.failure(`waiting for ${server.host}:${server.port}`, "dns_timeout")));
    socket.on("message", (msg) => {
      let res: Packet;
      try {
        res = packet.decode(msg);
      } catch {
        return; // garbage is ignored like a spoofed reply; the deadline still applies
      }
      if (res.id === query.id && res.type === "response") done(() => resolve(res));
    });
    socket.on("error", (err) => done(() => reject(err)));
    const send = () => socket.send(wire, server.port, server.host, (err) => { if (err) done(() => reject(err)); });
    if (deadline.signal.aborted) return onAbort();
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    send();
    timer = setInterval(send, RETRANSMIT_MS);
  });
}

export function queryTcp(server: Resolver, query: Packet, deadline: Deadline): Promise<Packet> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: server.host, port: server.port });
    let buf = Buffer.alloc(0);
    let settled = false;
    const done = (fn: () => void) => {
      if (settled) return;
      settled = true;
      deadline.signal.removeEventListener("abort", onAbort);
      socket.destroy();
      fn();
    };
    const onAbort = () => done(() => reject(deadline.failure(`waiting for ${server.host}:${server.port} over TCP`, "dns_timeout")));
    if (deadline.signal.aborted) return onAbort();
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    socket.on("connect", () => socket.write(packet.streamEncode(query)));
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
      try {
        const res = packet.streamDecode(buf);
        done(() => resolve(res));
      } catch (err) {
        done(() => reject(err));
      }
    });
    socket.on("error", (err) => done(() => reject(err)));
    socket.on("end", () => done(() => reject(Object.assign(new Error("connection closed before a full answer"), { code: "ECONNRESET" }))));
  });
}

/** Asks over UDP; a truncated (TC) answer is asked again over TCP on the same port. */
export async function queryDns(server: Resolver, query: Packet, deadline: Deadline): Promise<{ response: Packet; transport: "udp" | "tcp" }> {
  const udp = await queryUdp(server, query, deadline);
  if (!udp.flag_tc) return { response: udp, transport: "udp" };
  return { response: await queryTcp(server, query, deadline), transport: "tcp" };
}
