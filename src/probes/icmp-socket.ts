/**
 * ICMP sockets through bun:ffi (Node has no ICMP API and we do not shell out to `ping`). Sockets
 * are non-blocking and polled with a zero timeout from short timers, so the event loop never waits
 * on the kernel.
 */
import { dlopen, FFIType, read, type Pointer } from "bun:ffi";

const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_DGRAM = 2;
const SOCK_RAW = 3;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const IPPROTO_ICMP = 1;
const IPPROTO_ICMPV6 = 58;
const POLLIN = 1;
const MSG_DONTWAIT = 0x40;
export const EPERM = 1;
export const EACCES = 13;
const EAGAIN = 11;
const EINTR = 4;

export type PingMode = "dgram" | "raw";

function openLibc() {
  return dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    sendto: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i64 },
    recvfrom: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i64 },
    poll: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
    __errno_location: { args: [], returns: FFIType.ptr },
  });
}

type Libc = ReturnType<typeof openLibc>["symbols"];
let libc: Libc | null | undefined;

/** Loaded on first use; null where libc cannot be opened (ping then reports not permitted). */
function getLibc(): Libc | null {
  if (libc === undefined) {
    try {
      libc = openLibc().symbols;
    } catch {
      libc = null;
    }
  }
  return libc;
}

function errno(c: Libc): number {
  const p = c.__errno_location();
  return p ? read.i32(p as Pointer, 0) : 0;
}

export class IcmpSocket {
  private closed = false;
  private constructor(private readonly c: Libc, readonly fd: number, readonly mode: PingMode, readonly v6: boolean) {}

  /** Opens a socket of `mode`, or returns the errno explaining why not. */
  static open(mode: PingMode, v6: boolean): IcmpSocket | { errno: number } {
    const c = getLibc();
    if (!c) return { errno: EPERM };
    const type = (mode === "dgram" ? SOCK_DGRAM : SOCK_RAW) | SOCK_NONBLOCK | SOCK_CLOEXEC;
    const fd = c.socket(v6 ? AF_INET6 : AF_INET, type, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
    if (fd < 0) return { errno: errno(c) };
    return new IcmpSocket(c, fd, mode, v6);
  }

  /** Returns 0 on success or the errno. */
  send(packet: Uint8Array, addr: Uint8Array): number {
    const n = this.c.sendto(this.fd, packet, packet.length, 0, addr, addr.length);
    return Number(n) < 0 ? errno(this.c) : 0;
  }

  /** Drains every datagram ready now; never blocks. */
  receiveReady(): Uint8Array[] {
    const out: Uint8Array[] = [];
    const pfd = new Uint8Array(8);
    const view = new DataView(pfd.buffer);
    view.setInt32(0, this.fd, true);
    view.setInt16(4, POLLIN, true);
    for (let guard = 0; guard < 256; guard++) {
      view.setInt16(6, 0, true);
      const ready = this.c.poll(pfd, 1, 0);
      if (ready <= 0 || (view.getInt16(6, true) & POLLIN) === 0) break;
      const buf = new Uint8Array(2048);
      const n = Number(this.c.recvfrom(this.fd, buf, buf.length, MSG_DONTWAIT, null, null));
      if (n < 0) {
        const e = errno(this.c);
        if (e === EINTR) continue;
        if (e === EAGAIN) break;
        break;
      }
      out.push(buf.subarray(0, n));
    }
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.c.close(this.fd);
  }
}
