/** The health check's bytes: what real servers send is covered by grpc.test.ts; these are the answers they do not. */
import { expect, test } from "bun:test";
import { decodeGrpcMessage, grpcStatusName, healthCheckRequest, readHealthCheckResponse } from "../../src/probes/grpc-wire.ts";

const frame = (bytes: number[], flag = 0) => Buffer.from([flag, 0, 0, 0, bytes.length, ...bytes]);

test("the request is one framed message; the empty service is an empty message", () => {
  expect([...healthCheckRequest("")]).toEqual([0, 0, 0, 0, 0]);
  expect([...healthCheckRequest("ab")]).toEqual([0, 0, 0, 0, 4, 0x0a, 2, 0x61, 0x62]);
  // a 200-byte name needs a two-byte length
  expect([...healthCheckRequest("x".repeat(200)).subarray(0, 8)]).toEqual([0, 0, 0, 0, 203, 0x0a, 0xc8, 0x01]);
});

test.each([
  ["SERVING", frame([0x08, 1]), { status: 1 }],
  ["no field: proto3's default, UNKNOWN", frame([]), { status: 0 }],
  ["unknown fields of every wire type are skipped", frame([0x10, 5, 0x1a, 1, 0x41, 0x21, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4, 0x08, 2]), { status: 2 }],
  ["nothing", Buffer.alloc(0), { problem: "the answer has no message" }],
  ["a cut header", Buffer.from([0, 0, 0]), { problem: "the answer ends inside a message header" }],
  ["compressed", frame([0x08, 1], 1), { problem: "the answer is compressed, which was not asked for" }],
  ["shorter than announced", Buffer.from([0, 0, 0, 0, 3, 0x08, 1]), { problem: "the answer holds 2 bytes where its header announces 3" }],
  ["a cut varint", frame([0x08, 0x81]), { problem: "the answer is not a HealthCheckResponse" }],
  ["a length past the end", frame([0x1a, 9, 1]), { problem: "the answer is not a HealthCheckResponse" }],
  ["a group (wire type 3)", frame([0x0b]), { problem: "the answer is not a HealthCheckResponse" }],
])("an answer: %s", (_what, bytes, want) => {
  expect(readHealthCheckResponse(bytes)).toEqual(want);
});

test("status names and grpc-message's percent-encoding", () => {
  expect(grpcStatusName(5)).toBe("NOT_FOUND");
  expect(grpcStatusName(12)).toBe("UNIMPLEMENTED");
  expect(grpcStatusName(99)).toBe("status 99");
  expect(decodeGrpcMessage("no%20such%20service")).toBe("no such service");
  expect(decodeGrpcMessage("100%")).toBe("100%");
  expect(decodeGrpcMessage(undefined)).toBe("");
});
