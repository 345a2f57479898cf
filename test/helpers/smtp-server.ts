/**
 * A real SMTP server on 127.0.0.1 for smtp monitor tests, written over node:net and node:tls so a
 * test can make it misbehave: a banner that is not 220, an EHLO refused, STARTTLS not offered or
 * refused. Plain with STARTTLS (port 25/587 style) or TLS from the first byte (port 465 style).
 * Without a certificate of its own it makes a self-signed one with openssl that expires in 3 days.
 *
 * @example const smtp = await startSmtpServer({ mode: "ok" }); ... await smtp.stop();
 */
import net from "node:net";
import tls from "node:tls";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type SmtpServerMode =
  /** 220 banner, EHLO 250 with STARTTLS (before TLS), STARTTLS 220, QUIT 221 */
  | "ok"
  /** the banner is 554: the server does not want this client */
  | "bad-banner"
  /** EHLO answers 550 */
  | "bad-ehlo"
  /** STARTTLS is not among the EHLO extensions (and answers 502 if asked anyway) */
  | "no-starttls"
  /** STARTTLS is offered but answers 454 */
  | "starttls-refused"
  /** accepts the connection and never says a word */
  | "silent";

export interface SmtpServerOptions {
  mode?: SmtpServerMode;
  /** TLS from the first byte instead of plaintext with STARTTLS */
  implicitTls?: boolean;
  /** PEM files; default: a self-signed certificate for localhost and 127.0.0.1 valid for `days` */
  cert?: { certPath: string; keyPath: string };
  /** validity of the self-signed default certificate (default 3) */
  days?: number;
}

export interface SmtpServer {
  port: number;
  /** the certificate the server presents, for openssl-read expectations */
  certPath: string;
  /** every command received, in order, across connections ("EHLO vigil", "STARTTLS", "QUIT") */
  commands: string[];
  /** connections accepted so far */
  connections(): number;
  stop(): Promise<void>;
}

/** A self-signed certificate for localhost/127.0.0.1 made by openssl in `dir`, valid for `days`. */
export function selfSignedCert(dir: string, days: number): { certPath: string; keyPath: string } {
  const r = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "smtp.key", "-out", "smtp.pem", "-days", String(days),
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`);
  return { certPath: join(dir, "smtp.pem"), keyPath: join(dir, "smtp.key") };
}

export async function startSmtpServer(o: SmtpServerOptions = {}): Promise<SmtpServer> {
  const mode = o.mode ?? "ok";
  const ownDir = o.cert ? null : mkdtempSync(join(tmpdir(), "vigil-smtp-"));
  const cert = o.cert ?? selfSignedCert(ownDir!, o.days ?? 3);
  const pem = { cert: readFileSync(cert.certPath, "utf8"), key: readFileSync(cert.keyPath, "utf8") };
  const secureContext = tls.createSecureContext(pem);
  const commands: string[] = [];
  const sockets = new Set<net.Socket>();
  let count = 0;

  const session = (first: net.Socket, secureFromStart: boolean) => {
    count++;
    let socket = first;
    let secure = secureFromStart;
    let pending = "";
    const send = (text: string) => socket.write(text.replace(/\n/g, "\r\n") + "\r\n");
    const answer = (line: string) => {
      const command = line.trim();
      commands.push(command);
      const verb = command.split(" ")[0].toUpperCase();
      if (verb === "EHLO") {
        if (mode === "bad-ehlo") return send("550 5.7.1 EHLO refused by policy");
        const offerTls = !secure && mode !== "no-starttls";
        return send(["250-localhost greets you", "250-PIPELINING", ...(offerTls ? ["250-STARTTLS"] : []), "250 8BITMIME"].join("\n"));
      }
      if (verb === "HELO") return send("250 localhost");
      if (verb === "NOOP") return send("250 2.0.0 OK");
      if (verb === "QUIT") {
        send("221 2.0.0 bye");
        return void socket.end();
      }
      if (verb === "STARTTLS") {
        if (secure || mode === "no-starttls") return send("502 5.5.1 STARTTLS not available");
        if (mode === "starttls-refused") return send("454 4.7.0 TLS not available due to temporary reason");
        send("220 2.0.0 Ready to start TLS");
        upgrade();
        return;
      }
      send("500 5.5.2 command not recognised");
    };
    const onData = (chunk: Buffer) => {
      pending += chunk.toString("latin1");
      let i: number;
      while ((i = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, i).replace(/\r$/, "");
        pending = pending.slice(i + 1);
        answer(line);
        if (socket !== first && !secure) return; // upgrading: the rest belongs to the TLS layer
      }
    };
    const upgrade = () => {
      first.off("data", onData);
      const secured = new tls.TLSSocket(first, { isServer: true, secureContext });
      socket = secured;
      secured.on("error", () => secured.destroy());
      secured.once("secure", () => {
        secure = true;
        pending = ""; // RFC 3207: what came before the handshake is forgotten
        secured.on("data", onData);
      });
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
    if (mode === "silent") return;
    send(mode === "bad-banner" ? "554 5.3.2 localhost has no service for you" : "220 localhost ESMTP vigil-test");
  };

  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };
  const server = o.implicitTls
    ? tls.createServer(pem, (s) => { track(s); session(s, true); })
    : net.createServer((s) => { track(s); session(s, false); });
  // a client that fails the TLS handshake (tls_verify on a self-signed certificate) is not our error
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    certPath: cert.certPath,
    commands,
    connections: () => count,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
    },
  };
}
