/**
 * A real RDAP server on 127.0.0.1 for domain monitor tests: a bootstrap file (RFC 9224) that points
 * the given TLDs at itself, and domain answers (RFC 9083) from a table the test gives and may change
 * while the server runs; other domains are 404. Every request is recorded, so a test can tell an
 * answer from memory from a fresh one.
 *
 * @example const rdap = await startRdapServer({ tlds: ["test"], domains: { "ok.test": { expires: "2031-01-01T00:00:00Z" } } });
 */

export interface RdapDomain {
  /** ISO date of the `expiration` event; omitted: the answer has no expiration event */
  expires?: string;
  /** answer this raw body instead (status 200), for answers that are not JSON */
  rawBody?: string;
  /** answer this status with an RDAP error body */
  status?: number;
  /** never answer (until the server stops): the lookup must time out */
  hangs?: boolean;
}

export interface RdapServerOptions {
  /** TLDs (or longer suffixes) the bootstrap file sends here */
  tlds: string[];
  domains?: Record<string, RdapDomain>;
}

export interface RdapServer {
  url: string;
  port: number;
  /** the bootstrap file's URL, for --rdap-bootstrap or ProbeContext.rdapBootstrapUrl */
  bootstrapUrl: string;
  /** the table answered from; change it to change later answers */
  domains: Record<string, RdapDomain>;
  /** every request: path and Accept header */
  requests: { path: string; accept: string | null }[];
  /** requests whose path starts with `prefix` ("/dns.json", "/rdap/domain/") */
  count(prefix: string): number;
  stop(): Promise<void>;
}

export async function startRdapServer(o: RdapServerOptions): Promise<RdapServer> {
  const domains: Record<string, RdapDomain> = { ...o.domains };
  const requests: RdapServer["requests"] = [];
  const hanging: (() => void)[] = [];
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/rdap+json" } });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req): Promise<Response> {
      const url = new URL(req.url);
      requests.push({ path: url.pathname, accept: req.headers.get("accept") });
      if (url.pathname === "/dns.json") {
        return json({ version: "1.0", publication: "2026-11-24T00:00:00Z", description: "Vigil test bootstrap", services: [[o.tlds, [`http://127.0.0.1:${server.port}/rdap/`]]] });
      }
      const m = /^\/rdap\/domain\/([^/]+)$/.exec(url.pathname);
      const d = m ? domains[m[1].toLowerCase()] : undefined;
      if (!m || !d) return json({ errorCode: 404, title: "Not Found", description: ["no such domain"] }, 404);
      if (d.hangs) await new Promise<void>((resolve) => hanging.push(resolve));
      if (d.status) return json({ errorCode: d.status, title: "Error" }, d.status);
      if (d.rawBody !== undefined) return new Response(d.rawBody, { headers: { "content-type": "application/rdap+json" } });
      const events = [{ eventAction: "registration", eventDate: "2001-01-01T00:00:00Z" }, ...(d.expires ? [{ eventAction: "expiration", eventDate: d.expires }] : [])];
      return json({ objectClassName: "domain", ldhName: m[1], rdapConformance: ["rdap_level_0"], status: ["active"], events });
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    port: server.port as number,
    bootstrapUrl: `${url}/dns.json`,
    domains,
    requests,
    count: (prefix) => requests.filter((r) => r.path.startsWith(prefix)).length,
    stop: async () => {
      for (const release of hanging.splice(0)) release();
      await server.stop(true);
    },
  };
}
