/**
 * Redis probe (README "Redis"): one connection to the judged IP of a redis:// (or TLS rediss://)
 * target, AUTH with db_password (and redis_username for an ACL user), SELECT of the URL's database
 * when it names one, then PING, all sent at once; up when the answer is PONG. The connection is
 * closed after. Spoken directly in RESP (the protocol's few replies are all it needs), which lets
 * the probe tell a refused login from a refused connection, record the certificate whatever
 * tls_verify says, and send no password before the certificate has passed.
 */
import net from "node:net";
import { emptyResult, failed, type CheckResult } from "../domain/check-result.ts";
import { latencyReason } from "../domain/cert-expiry.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { elapsedMs, startDeadline, type Deadline } from "../net/deadline.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { judgePeerCertificate } from "../net/peer-certificate.ts";
import { resolveHost } from "../net/resolve-host.ts";
import { connectTls } from "../net/tls-connect.ts";
import { endpointOf, parseDbTarget } from "./db-target.ts";
import { maskText, secretsOf } from "./request-auth.ts";
import { encodeCommand, readReply, RespProtocolError, type RespReply } from "./resp-reply.ts";
import { connectTcp } from "./tcp.ts";
import type { Probe } from "./types.ts";

/** More than any answer to AUTH, SELECT and PING: a server that keeps talking is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Sends `commands` at once and reads their replies, stopping at the first error reply. */
function exchange(socket: net.Socket, commands: string[][], deadline: Deadline, endpoint: string): Promise<RespReply[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let offset = 0;
    const replies: RespReply[] = [];
    const finish = (err: Error | null) => {
      deadline.signal.removeEventListener("abort", abort);
      socket.removeAllListeners("data");
      if (err) reject(err);
      else resolve(replies);
    };
    const abort = () => {
      socket.destroy();
      finish(deadline.failure(`waiting for the answer from ${endpoint}`));
    };
    if (deadline.signal.aborted) return abort();
    deadline.signal.addEventListener("abort", abort, { once: true });
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length > MAX_ANSWER_BYTES) return finish(new ProbeFailure("db_error", `${endpoint} answered more than ${MAX_ANSWER_BYTES} bytes; is it a Redis server?`));
      try {
        for (let r = readReply(buf, offset); r; r = readReply(buf, offset)) {
          replies.push(r.reply);
          offset = r.next;
          if (r.reply.kind === "error" || replies.length === commands.length) return finish(null);
        }
      } catch (err) {
        finish(new ProbeFailure("db_error", `${endpoint} does not answer like a Redis server: ${(err as RespProtocolError).message}`));
      }
    });
    socket.once("close", () => finish(new ProbeFailure("db_error", `${endpoint} closed the connection without answering`)));
    socket.once("error", (err) => finish(err));
    socket.write(Buffer.concat(commands.map(encodeCommand)));
  });
}

const firstWords = (text: string | null) => (text ?? "").slice(0, 200);

export const redisProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  const blockPrivate = ctx.blockPrivateTargets === true || m.block_private_targets;
  const observed: Partial<CheckResult> = {};
  let secrets = secretsOf(m);
  let endpoint = m.target ?? "";
  let socket: net.Socket | null = null;
  try {
    const t = parseDbTarget(m.target, ["redis", "rediss"], 6379, "redis://host:6379/0");
    if (t.urlPassword) secrets = secretsOf(m, [t.urlPassword]);
    const db = t.database === "" ? null : Number(t.database);
    if (db !== null && (!Number.isInteger(db) || db < 0)) throw new ProbeFailure("db_error", `the database in the target must be a number, not ${JSON.stringify(t.database)}`);
    endpoint = endpointOf(t.host, t.port);
    const target = await resolveHost(t.host, deadline, blockPrivate);
    observed.resolved_ip = target.ip;
    const started = performance.now();
    if (t.scheme === "rediss") {
      // verified below, after the handshake, so the certificate is seen (and recorded) either way
      const secure = await connectTls({
        target,
        port: t.port,
        endpoint,
        extraCa: ctx.extraCa,
        blockPrivate,
        signal: deadline.signal,
        onAbort: (tcpUp) => deadline.failure(tcpUp ? `during the TLS handshake with ${endpoint}` : `connecting to ${endpoint}`),
      });
      socket = secure;
      const seen = judgePeerCertificate(secure, target.host, endpoint);
      observed.ssl_not_after = seen.watched?.notAfter ?? null;
      if (m.tls_verify !== false && seen.refusal) throw seen.refusal;
    } else {
      socket = await connectTcp(target, t.port, blockPrivate, deadline.signal, () => deadline.failure(`connecting to ${endpoint}`));
    }
    const user = m.redis_username ?? (t.user || null);
    const commands: string[][] = [];
    if (m.db_password || user) commands.push(user ? ["AUTH", user, m.db_password ?? ""] : ["AUTH", m.db_password!]);
    if (db !== null) commands.push(["SELECT", String(db)]);
    commands.push(["PING"]);
    const replies = await exchange(socket, commands, deadline, endpoint);
    const last = replies[replies.length - 1]!;
    const command = commands[replies.length - 1]![0];
    if (last.kind === "error") {
      if (command === "AUTH") throw new ProbeFailure("db_auth_failed", `Redis at ${endpoint} refused the login${user ? ` of ${JSON.stringify(user)}` : ""}: ${firstWords(last.text)}`);
      if (command === "SELECT") throw new ProbeFailure("db_error", `Redis at ${endpoint} refused database ${db}: ${firstWords(last.text)}`);
      if (last.text?.startsWith("NOAUTH")) throw new ProbeFailure("db_auth_failed", `Redis at ${endpoint} asks for a password (db_password): ${firstWords(last.text)}`);
      throw new ProbeFailure("db_error", `Redis at ${endpoint} answered PING with an error: ${firstWords(last.text)}`);
    }
    if (last.text !== "PONG") throw new ProbeFailure("db_error", `Redis at ${endpoint} answered PING with ${JSON.stringify(firstWords(last.text))}, not PONG`);
    const latency = elapsedMs(started);
    const slow = latencyReason(latency, m.api_max_latency_ms);
    return { ...emptyResult(checkedAt), ...observed, latency_ms: latency, status: slow ? "degraded" : "up", degraded_reason: slow };
  } catch (err) {
    const f = toProbeFailure(err, endpoint);
    // a reset or another socket error that is neither a refusal nor a timeout: the check's catch-all
    const code = f.code === "connection_error" ? "db_error" : f.code;
    return failed(checkedAt, code, maskText(f.message, secrets), { ...observed, ...f.extra });
  } finally {
    deadline.dispose();
    socket?.destroy();
  }
};
