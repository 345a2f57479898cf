/**
 * Local check targets for the scheduler benches, run as a child process:
 *   bun scripts/bench/lib/targets.ts <addresses> <http-ports-per-address> <tcp-ports-per-address>
 * HTTP servers (200 "ok") and TCP listeners (accept, close) on 127.0.0.2, 127.0.0.3, ... each on
 * ports the kernel picks, so the checks spread over many (address, port) pairs and the kernel's
 * TIME_WAIT port search for one pair is not what the bench measures. Prints one JSON line
 * {"http": ["ip:port", ...], "tcp": [...]} when listening, and counts requests until killed.
 */
export interface TargetList {
  http: string[];
  tcp: string[];
}

if (import.meta.main) {
  const [addresses, httpPorts, tcpPorts] = process.argv.slice(2).map(Number) as [number, number, number];
  const out: TargetList = { http: [], tcp: [] };
  let requests = 0;
  for (let a = 0; a < addresses; a++) {
    const hostname = `127.0.0.${2 + a}`;
    for (let p = 0; p < httpPorts; p++) {
      const s = Bun.serve({
        hostname,
        port: 0,
        fetch() {
          requests++;
          return new Response("ok");
        },
      });
      out.http.push(`${hostname}:${s.port}`);
    }
    for (let p = 0; p < tcpPorts; p++) {
      const l = Bun.listen({
        hostname,
        port: 0,
        socket: {
          open(socket) {
            socket.end();
          },
          data() {},
        },
      });
      out.tcp.push(`${hostname}:${l.port}`);
    }
  }
  console.log(JSON.stringify(out));
  setInterval(() => console.log(JSON.stringify({ requests })), 5000);
}
