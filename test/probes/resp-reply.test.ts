/** The RESP2 replies the redis probe reads, whole and cut anywhere, and the commands it writes. */
import { expect, test } from "bun:test";
import { encodeCommand, readReply, RespProtocolError } from "../../src/probes/resp-reply.ts";

test("commands are arrays of bulk strings, counted in bytes", () => {
  expect(encodeCommand(["AUTH", "é\r\n"]).toString()).toBe("*2\r\n$4\r\nAUTH\r\n$4\r\né\r\n\r\n");
});

test("each reply kind, then where the next one starts", () => {
  const buf = Buffer.from("+OK\r\n-ERR no\r\n:42\r\n$4\r\nPO\r\n\r\n$-1\r\n");
  const kinds: unknown[] = [];
  let offset = 0;
  for (let r = readReply(buf, offset); r; r = readReply(buf, offset)) {
    kinds.push(r.reply);
    offset = r.next;
  }
  expect(kinds).toEqual([
    { kind: "simple", text: "OK" },
    { kind: "error", text: "ERR no" },
    { kind: "integer", text: "42" },
    { kind: "bulk", text: "PO\r\n" },
    { kind: "bulk", text: null },
  ]);
  expect(offset).toBe(buf.length);
});

test("a reply cut anywhere is incomplete, not wrong", () => {
  const whole = "$4\r\nPONG\r\n";
  for (let i = 0; i < whole.length; i++) expect(readReply(Buffer.from(whole.slice(0, i)))).toBeNull();
  expect(readReply(Buffer.from(whole))?.reply).toEqual({ kind: "bulk", text: "PONG" });
});

test("bytes that are no reply are a protocol error", () => {
  expect(() => readReply(Buffer.from("HTTP/1.1 400 Bad Request\r\n"))).toThrow(RespProtocolError);
  expect(() => readReply(Buffer.from("$x\r\n"))).toThrow(RespProtocolError);
});
