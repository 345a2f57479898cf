/**
 * An SMTP server on 127.0.0.1 that takes every message and keeps it, for tests of the mail Vigil
 * sends (status page subscriptions). Plain SMTP only: no STARTTLS offered, no authentication.
 *
 * @example const sink = await startSmtpSink(); ... sink.messages; await sink.stop();
 */
import net from "node:net";

export interface SunkMessage {
  from: string;
  to: string[];
  /** header names in lower case, folded lines joined */
  headers: Record<string, string>;
  body: string;
}

export interface SmtpSink {
  port: number;
  url: string;
  messages: SunkMessage[];
  stop(): Promise<void>;
}

function parse(from: string, to: string[], data: string): SunkMessage {
  const text = data.replace(/\r\n/g, "\n").replace(/^\.\./gm, ".");
  const split = text.indexOf("\n\n");
  const head = split < 0 ? text : text.slice(0, split);
  const headers: Record<string, string> = {};
  let last = "";
  for (const line of head.split("\n")) {
    if (/^\s/.test(line) && last) headers[last] = `${headers[last]} ${line.trim()}`.trim();
    else {
      const i = line.indexOf(":");
      if (i > 0) headers[(last = line.slice(0, i).toLowerCase())] = line.slice(i + 1).trim();
    }
  }
  let body = split < 0 ? "" : text.slice(split + 2);
  if (/quoted-printable/i.test(headers["content-transfer-encoding"] ?? "")) body = body.replace(/=\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  return { from, to, headers, body };
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SunkMessage[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffer = "";
    let inData = false;
    let data = "";
    let from = "";
    let to: string[] = [];
    socket.write("220 sink ESMTP\r\n");
    socket.on("data", (chunk) => {
      buffer += chunk.toString("utf8");
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end < 0 && !buffer.startsWith(".\r\n")) return;
          if (buffer.startsWith(".\r\n")) buffer = buffer.slice(3);
          else {
            data += buffer.slice(0, end);
            buffer = buffer.slice(end + 5);
          }
          messages.push(parse(from, to, data));
          inData = false;
          data = "";
          socket.write("250 kept\r\n");
          continue;
        }
        const nl = buffer.indexOf("\r\n");
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO") socket.write("250-sink\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n");
        else if (verb === "HELO") socket.write("250 sink\r\n");
        else if (verb === "MAIL") {
          from = /<([^>]*)>/.exec(line)?.[1] ?? "";
          to = [];
          socket.write("250 ok\r\n");
        } else if (verb === "RCPT") {
          to.push(/<([^>]*)>/.exec(line)?.[1] ?? "");
          socket.write("250 ok\r\n");
        } else if (verb === "DATA") {
          inData = true;
          socket.write("354 go on\r\n");
        } else if (verb === "QUIT") {
          socket.end("221 bye\r\n");
          return;
        } else socket.write("250 ok\r\n"); // RSET, NOOP
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
