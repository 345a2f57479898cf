/**
 * Two local HTTP targets for the fairness bench, run as a child process:
 *   bun scripts/bench/lib/hanging-target.ts
 * on 127.0.0.2, one that accepts every request and never answers (the check times out) and one that
 * answers 200 "ok" at once. Prints {"hang": "ip:port", "ok": "ip:port"} when listening, then the
 * requests it holds every 5 s, until killed.
 */
if (import.meta.main) {
  let holding = 0;
  const hang = Bun.serve({
    hostname: "127.0.0.2",
    port: 0,
    idleTimeout: 0,
    fetch(req) {
      holding++;
      return new Promise<Response>((resolve) => {
        // held until the checker gives up and closes the connection
        req.signal.addEventListener("abort", () => {
          holding--;
          resolve(new Response(null, { status: 499 }));
        });
      });
    },
  });
  const ok = Bun.serve({ hostname: "127.0.0.2", port: 0, fetch: () => new Response("ok") });
  console.log(JSON.stringify({ hang: `127.0.0.2:${hang.port}`, ok: `127.0.0.2:${ok.port}` }));
  setInterval(() => console.log(JSON.stringify({ holding })), 5000);
}
