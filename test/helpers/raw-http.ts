/**
 * HTTP/1.1 over a raw socket, for what fetch will not do: send any method token, keep sending a
 * declared body past an early answer, stream a chunked body that never ends, and tell whether the
 * connection failed before or after the answer was read.
 */
import net from "node:net";

export type BodyPlan =
  | { framing: "none" }
  /** Content-Length: `total`, and `total` bytes sent */
  | { framing: "length"; total: number }
  /** chunked: `total` bytes, then the last chunk; `unterminated`: never the last chunk, a body that never ends */
  | { framing: "chunked"; total: number; unterminated?: boolean };

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: BodyPlan;
  /** stop sending the body once an answer is in; by default a client goes on, as one not watching would */
  stopOnAnswer?: boolean;
  /** the answer is its status line and headers: for answers that stream */
  headersOnly?: boolean;
  /** a pause between 64 KiB pieces; 0: as fast as the socket takes them */
  everyMs?: number;
  /** give up and close after this long: a hang, not a speed limit */
  deadlineMs?: number;
  /** a second request sent on the same connection once the first answer is in and the body sent */
  then?: string;
  /** the request line's version: "1.0" for a client of HTTP/1.0 (default "1.1") */
  version?: "1.0" | "1.1";
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface RawExchange {
  answer: RawAnswer | null;
  /** the answer to `then` */
  second: RawAnswer | null;
  /** a socket error (ECONNRESET, EPIPE) that came before the answer was read */
  errorBeforeAnswer: string | null;
  /** body bytes written when the answer was read, and in all */
  sentAtAnswer: number;
  sent: number;
  /** the server closed the connection, not the client (after its deadline, or once done) */
  closedByServer: boolean;
}

const PIECE = Buffer.alloc(64 * 1024, "a");

/** The answers complete in `buf`, in order. */
function parseAnswers(buf: Buffer, headersOnly: boolean): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf("\r\n\r\n", at);
    if (end < 0) return answers;
    const lines = buf.subarray(at, end).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(":");
      if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = headersOnly ? 0 : Number(headers["content-length"] ?? "0");
    if (buf.length < end + 4 + length) return answers;
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? "0");
    answers.push({ status, headers, text: buf.subarray(end + 4, end + 4 + length).toString("utf8") });
    if (headersOnly) return answers;
    at = end + 4 + length;
  }
}

/** Sends `req` on a new connection and reads its answer (and the answer to `req.then`). */
export function rawExchange(port: number, req: RawRequest): Promise<RawExchange> {
  const body = req.body ?? { framing: "none" };
  const total = body.framing === "none" ? 0 : body.total;
  const framing = body.framing === "length" ? { "content-length": String(total) } : body.framing === "chunked" ? { "transfer-encoding": "chunked" } : {};
  const head = Object.entries({ host: "localhost", ...req.headers, ...framing }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    let sent = 0;
    let bodyDone = total === 0;
    const r: RawExchange = { answer: null, second: null, errorBeforeAnswer: null, sentAtAnswer: -1, sent: 0, closedByServer: true };
    let pause: ReturnType<typeof setTimeout> | null = null;
    const close = () => {
      r.closedByServer = false;
      sock.destroy();
    };
    const deadline = setTimeout(close, req.deadlineMs ?? 30_000);
    const done = () => r.answer !== null && (req.then === undefined ? bodyDone || req.stopOnAnswer === true : r.second !== null);
    const sendThen = () => req.then !== undefined && r.answer && bodyDone && sock.write(req.then);
    const write = () => {
      pause = null;
      while (!sock.destroyed && !bodyDone && !(r.answer && req.stopOnAnswer)) {
        const n = Math.min(PIECE.length, total - sent);
        const piece = body.framing === "chunked" ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), PIECE.subarray(0, n), Buffer.from("\r\n")]) : PIECE.subarray(0, n);
        sent += n;
        bodyDone = sent >= total;
        const last = bodyDone && body.framing === "chunked" && !body.unterminated;
        const more = sock.write(last ? Buffer.concat([piece, Buffer.from("0\r\n\r\n")]) : piece);
        if (bodyDone) {
          sendThen();
          if (done()) close();
          return;
        }
        if (req.everyMs) return void (pause = setTimeout(write, req.everyMs));
        if (!more) return void sock.once("drain", write);
      }
    };
    sock.on("connect", () => {
      sock.write(`${req.method} ${req.path} HTTP/${req.version ?? "1.1"}\r\n${head}\r\n`);
      write();
    });
    sock.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const answers = parseAnswers(buf, req.headersOnly === true);
      if (!r.answer && answers[0]) {
        r.answer = answers[0];
        r.sentAtAnswer = sent;
        sendThen();
      }
      if (answers[1]) r.second = answers[1];
      if (done()) close();
    });
    sock.on("error", (e: NodeJS.ErrnoException) => {
      if (!r.answer) r.errorBeforeAnswer ??= e.code ?? e.message;
    });
    sock.on("close", () => {
      clearTimeout(deadline);
      if (pause) clearTimeout(pause);
      r.sent = sent;
      resolve(r);
    });
  });
}
