import { SERVE_OPTIONS } from "../config/options.ts";
import { parseCommand, UsageError, type CliIo } from "./io.ts";

export const HEALTHCHECK_HELP = `Usage:
  vigil healthcheck [--port N] [--host ADDR] [--live] [--url URL] [--timeout SEC]

Asks the server on this machine whether it is ready and exits 0 when it is, 1 when it is not or
does not answer: for Docker's HEALTHCHECK, systemd and other supervisors, where no curl is at hand.
It reads --port and --host like \`vigil serve\` (env VIGIL_PORT, VIGIL_HOST; defaults 8080 and
0.0.0.0, asked on 127.0.0.1), so the same settings reach both.

  (default)      GET /readyz: the server answers, its store takes a write, its services are ready
  --live         GET /healthz instead: the process answers (liveness)
  --url URL      ask this address instead of the local one
  --timeout SEC  give up after SEC seconds (default 5)`;

export async function healthcheckCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, { port: { type: "string" }, host: { type: "string" }, live: { type: "boolean" }, url: { type: "string" }, timeout: { type: "string" } });
  if (values.help) return io.out(HEALTHCHECK_HELP), 0;
  const timeout = Number(values.timeout ?? 5);
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > 300) throw new UsageError(`--timeout must be a number of seconds from 0 to 300, got "${values.timeout}"`);
  const url = (values.url as string | undefined) ?? localUrl(values, io) + (values.live ? "/healthz" : "/readyz");
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeout * 1000), redirect: "manual" });
  } catch (e) {
    const err = e as Error & { code?: string };
    io.err(`unhealthy: no answer from ${url}: ${err.name === "TimeoutError" ? `none within ${timeout} s` : (err.code ?? err.message)}`);
    return 1;
  }
  const text = await res.text().catch(() => "");
  let body: { status?: string; problems?: string[] } = {};
  try {
    body = JSON.parse(text);
  } catch {}
  if (res.ok) {
    io.out(`healthy: ${url} answered ${res.status}${body.status ? ` (${body.status})` : ""}`);
    return 0;
  }
  const problems = Array.isArray(body.problems) && body.problems.length ? `: ${body.problems.join("; ")}` : "";
  io.err(`unhealthy: ${url} answered ${res.status}${body.status ? ` (${body.status})` : ""}${problems}`);
  return 1;
}

/** Where `vigil serve` with the same settings listens, as seen from this machine. */
function localUrl(values: Record<string, unknown>, io: CliIo): string {
  const pick = (flag: string, spec: { env: string; fallback: string | null }) => (values[flag] as string | undefined) ?? (io.env[spec.env] || spec.fallback!);
  const portText = pick("port", SERVE_OPTIONS.port);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) throw new UsageError(`--port must be an integer from 1 to 65535 (the port the server listens on), got "${portText}"`);
  let host = pick("host", SERVE_OPTIONS.host);
  // a wildcard address listens on loopback too
  if (host === "0.0.0.0" || host === "") host = "127.0.0.1";
  else if (host === "::" || host === "[::]") host = "::1";
  if (host.includes(":") && !host.startsWith("[")) host = `[${host}]`;
  return `http://${host}:${port}`;
}
