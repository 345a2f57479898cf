import { Elysia } from "elysia";
import type { WebContext } from "./web-context.ts";
import type { RouteCtx } from "./routing.ts";

/**
 * GET /events: Server-Sent Events for the signed-in account, driven by ctx.events. `state` names a
 * monitor whose state changed and its old and new state; `changed` says a monitor was created,
 * edited or deleted (the page re-fetches its rows). Streams end on drain (shutdown) and after STREAM_MS;
 * the browser reconnects by itself and then re-fetches its rows, so nothing missed in between is lost.
 */
export const STREAM_MS = 25_000;
const KEEPALIVE_MS = 10_000;
/**
 * Streams one session may hold open at once: one per dashboard tab, and a person has a few. Opening
 * one more ends the session's oldest (README "Security"), so a script holding a session cannot pile
 * up streams and their listeners, and a tab left behind gives way to a new one.
 */
export const STREAMS_PER_SESSION = 8;

export class LiveStreams {
  private readonly open = new Set<() => void>();
  /** each session's streams (session id hash → their end functions), oldest first */
  private readonly bySession = new Map<string, (() => void)[]>();
  private draining = false;

  /** Ends every open stream and refuses new ones (shutdown). */
  closeAll(): void {
    this.draining = true;
    for (const end of [...this.open]) end();
  }

  routes(web: WebContext) {
    return new Elysia({ name: "web-live" }).get("/events", async (c: RouteCtx) => {
      if (this.draining) return new Response("shutting down\n", { status: 503, headers: { "retry-after": "2", "cache-control": "no-store" } });
      const session = await web.session(c.request);
      if (!session) return new Response("sign in first\n", { status: 401, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
      // the stream is silent between keep-alives, longer than a short --idle-timeout, which would
      // cut it: this request's own timeout outlasts a keep-alive
      c.server?.timeout?.(c.request, Math.max(web.app.config.idleTimeoutSec, KEEPALIVE_MS / 1000 + 5));
      const accountId = session.account_id;
      const sessionKey = session.id_hash;
      const enc = new TextEncoder();
      let end = () => {};
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          let closed = false;
          const write = (text: string) => {
            if (!closed) controller.enqueue(enc.encode(text));
          };
          // the list refetches its page (figures, summary and order change with a state); the monitor page its parts
          const offState = web.app.events.on("monitor.state", (e) => {
            if (e.accountId === accountId) write(`event: state\ndata: ${JSON.stringify({ monitorId: e.monitorId, from: e.from, to: e.to })}\n\n`);
          });
          const offChanged = web.app.events.on("monitor.changed", (e) => {
            if (e.accountId === accountId) write(`event: changed\ndata: ${JSON.stringify({ monitorId: e.monitorId, deleted: e.deleted === true })}\n\n`);
          });
          const ping = setInterval(() => write(": keep-alive\n\n"), KEEPALIVE_MS);
          const lifetime = setTimeout(() => end(), STREAM_MS);
          end = () => {
            if (closed) return;
            closed = true;
            offState();
            offChanged();
            clearInterval(ping);
            clearTimeout(lifetime);
            this.open.delete(end);
            const mine = this.bySession.get(sessionKey);
            const at = mine ? mine.indexOf(end) : -1;
            if (at >= 0) mine!.splice(at, 1);
            if (mine?.length === 0) this.bySession.delete(sessionKey);
            try {
              controller.close();
            } catch {}
          };
          this.open.add(end);
          const mine = this.bySession.get(sessionKey) ?? [];
          this.bySession.set(sessionKey, mine);
          mine.push(end);
          if (mine.length > STREAMS_PER_SESSION) mine[0]!();
          write("retry: 2000\n: connected\n\n");
        },
        cancel: () => end(),
      });
      return new Response(body, {
        headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff", "x-accel-buffering": "no" },
      });
    });
  }
}
