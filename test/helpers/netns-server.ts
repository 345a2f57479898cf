/**
 * A small HTTP server run inside a test's network namespace (netns.ts), where it has an address the
 * private-target guard counts as public. Routes: /ok answers 200; /redirect?to=URL answers 302 to
 * URL; /refuse answers 400 with a body a chat service might send. Prints its port once listening.
 */
const host = process.argv[2] ?? "0.0.0.0";
const server = Bun.serve({
  hostname: host,
  port: 0,
  fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/ok") return new Response("public ok");
    if (url.pathname === "/redirect") return new Response(null, { status: 302, headers: { location: url.searchParams.get("to") ?? "/" } });
    if (url.pathname === "/refuse") return new Response("invalid_token: the webhook was revoked", { status: 400 });
    return new Response("no route", { status: 404 });
  },
});
console.log(`port ${server.port}`);
