/**
 * The few RESP2 replies the redis probe reads (README "Redis"): simple strings, errors, integers
 * and bulk strings, and the commands it sends, as arrays of bulk strings.
 */

export interface RespReply {
  kind: "simple" | "error" | "integer" | "bulk";
  /** null for a null bulk string */
  text: string | null;
}

/** One command as RESP: an array of bulk strings, so any byte may be in an argument. */
export function encodeCommand(args: string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const a of args) parts.push(`$${Buffer.byteLength(a)}\r\n${a}\r\n`);
  return Buffer.from(parts.join(""));
}

export class RespProtocolError extends Error {}

/**
 * The reply starting at `offset` of `buf` and where the next one starts, or null while it is still
 * incomplete. Throws RespProtocolError on bytes that are no RESP2 reply this reader knows.
 */
export function readReply(buf: Buffer, offset = 0): { reply: RespReply; next: number } | null {
  if (offset >= buf.length) return null;
  const lineEnd = buf.indexOf("\r\n", offset);
  if (lineEnd < 0) return null;
  const type = String.fromCharCode(buf[offset]!);
  const line = buf.toString("utf8", offset + 1, lineEnd);
  switch (type) {
    case "+":
      return { reply: { kind: "simple", text: line }, next: lineEnd + 2 };
    case "-":
      return { reply: { kind: "error", text: line }, next: lineEnd + 2 };
    case ":":
      return { reply: { kind: "integer", text: line }, next: lineEnd + 2 };
    case "$": {
      const length = Number(line);
      if (!Number.isInteger(length) || length < -1) throw new RespProtocolError(`bad bulk length ${JSON.stringify(line.slice(0, 20))}`);
      if (length === -1) return { reply: { kind: "bulk", text: null }, next: lineEnd + 2 };
      const end = lineEnd + 2 + length;
      if (buf.length < end + 2) return null;
      return { reply: { kind: "bulk", text: buf.toString("utf8", lineEnd + 2, end) }, next: end + 2 };
    }
    default:
      throw new RespProtocolError(`unexpected reply starting with ${JSON.stringify(buf.toString("latin1", offset, Math.min(offset + 20, buf.length)))}`);
  }
}
