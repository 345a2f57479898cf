/**
 * The one call a grpc check makes, `grpc.health.v1.Health/Check`, as bytes: the request and answer
 * messages (protobuf, one field each), gRPC's length-prefixed framing, and the names of gRPC status
 * codes. Written by hand because the call is this small (README, gRPC monitors: why no gRPC library).
 */

export const HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check";

/** HealthCheckResponse.ServingStatus, by number. */
export const SERVING_STATUSES = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"] as const;

/** gRPC status codes, by number (the gRPC documentation's "Status codes and their use"). */
export const GRPC_STATUS_NAMES = [
  "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
  "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
  "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
] as const;

/** A health answer is a few bytes; anything past this is not one. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export function grpcStatusName(code: number): string {
  return GRPC_STATUS_NAMES[code] ?? `status ${code}`;
}

export function servingStatusName(status: number): string {
  return SERVING_STATUSES[status] ?? `serving status ${status}`;
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** The framed HealthCheckRequest `{ service }` (field 1, a string; "" is sent as an empty message). */
export function healthCheckRequest(service: string): Buffer {
  const name = Buffer.from(service, "utf8");
  const message = name.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, ...varint(name.length)]), name]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** Reads a varint at `at`; null when the bytes end inside it or it is longer than a uint32 needs. */
function readVarint(buf: Buffer, at: number): { value: number; next: number } | null {
  let value = 0;
  for (let i = 0; i < 10 && at + i < buf.length; i++) {
    const byte = buf[at + i]!;
    if (i < 5) value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return { value, next: at + i + 1 };
  }
  return null;
}

/**
 * The serving status in a framed HealthCheckResponse (proto3: an absent field is 0, UNKNOWN), or
 * what is wrong with the bytes.
 */
export function readHealthCheckResponse(body: Buffer): { status: number } | { problem: string } {
  if (body.length < 5) return { problem: body.length === 0 ? "the answer has no message" : "the answer ends inside a message header" };
  if (body[0] !== 0) return { problem: "the answer is compressed, which was not asked for" };
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length) return { problem: `the answer holds ${body.length - 5} bytes where its header announces ${length}` };
  const message = body.subarray(5);
  let status = 0;
  let at = 0;
  while (at < message.length) {
    const key = readVarint(message, at);
    if (!key) return { problem: "the answer is not a HealthCheckResponse" };
    at = key.next;
    const field = Math.floor(key.value / 8);
    const wireType = key.value % 8;
    if (wireType === 0) {
      const v = readVarint(message, at);
      if (!v) return { problem: "the answer is not a HealthCheckResponse" };
      if (field === 1) status = v.value;
      at = v.next;
    } else if (wireType === 2) {
      const len = readVarint(message, at);
      if (!len || len.next + len.value > message.length) return { problem: "the answer is not a HealthCheckResponse" };
      at = len.next + len.value;
    } else if (wireType === 1 || wireType === 5) {
      at += wireType === 1 ? 8 : 4;
    } else {
      return { problem: "the answer is not a HealthCheckResponse" };
    }
  }
  if (at !== message.length) return { problem: "the answer is not a HealthCheckResponse" };
  return { status };
}

/** grpc-message is percent-encoded on the wire; a malformed one is shown as it came. */
export function decodeGrpcMessage(raw: string | undefined): string {
  if (!raw) return "";
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
