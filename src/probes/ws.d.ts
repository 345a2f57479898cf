/**
 * Minimal typing for the parts of `ws` that the websocket probe uses. Under Bun, `ws` is the
 * runtime's own module (the `ws` client API over Bun's native framing), so there is no package and
 * no bundled typing to install.
 */
declare module "ws" {
  import { EventEmitter } from "node:events";
  import type { ClientRequest, IncomingMessage } from "node:http";
  import type { Duplex } from "node:stream";

  export interface ClientOptions {
    headers?: Record<string, string>;
    /** opens the connection; the probe uses it to connect to the address the private-target guard judged */
    createConnection?: (options: unknown) => Duplex;
    followRedirects?: boolean;
    maxPayload?: number;
    perMessageDeflate?: boolean;
  }

  class WebSocket extends EventEmitter {
    static readonly CONNECTING: 0;
    static readonly OPEN: 1;
    static readonly CLOSING: 2;
    static readonly CLOSED: 3;
    constructor(address: string, protocols?: string[], options?: ClientOptions);
    readonly readyState: 0 | 1 | 2 | 3;
    send(data: string, cb?: (err?: Error) => void): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
    on(event: "upgrade", listener: (response: IncomingMessage) => void): this;
    on(event: "open", listener: () => void): this;
    on(event: "message", listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void): this;
    on(event: "unexpected-response", listener: (request: ClientRequest, response: IncomingMessage) => void): this;
    on(event: "error", listener: (err: Error & { code?: string }) => void): this;
    on(event: "close", listener: (code: number, reason: Buffer) => void): this;
  }
  export default WebSocket;
}
