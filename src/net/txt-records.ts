import { promises as dns } from "node:dns";

/** What a TXT lookup found: the records' texts, or why there was no answer to read. */
export type TxtLookup = { ok: true; texts: string[] } | { ok: false; reason: string };

/**
 * The TXT records at `name`, each record's strings joined (a record longer than 255 characters
 * arrives in pieces) and each piece on its own too, asked of `server` ("ip" or "ip:port") or of the
 * system's resolvers. No record (NXDOMAIN, no TXT) is an empty list; a failed lookup says why.
 */
export async function txtRecords(name: string, server: string | null, timeoutMs: number): Promise<TxtLookup> {
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
  if (server !== null) resolver.setServers([server]);
  try {
    const records = await resolver.resolveTxt(name);
    return { ok: true, texts: [...new Set(records.flatMap((r) => [r.join(""), ...r]))] };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "";
    if (code === "ENOTFOUND" || code === "ENODATA") return { ok: true, texts: [] };
    return { ok: false, reason: code || String((err as Error).message ?? err) };
  }
}
