/**
 * HTTP load generation for the benches: wrk (Debian's `wrk`, a C generator that leaves most of the
 * two cores to the server) when installed, otherwise autocannon from npm. A bench measures Vigil and
 * its reference with the same generator in the same run, so the ratio is fair either way.
 *
 * Requests cycle over a list of paths; each carries `X-Request-Id: <index>`, which the servers echo,
 * so every 2xx answer is counted per path ("acknowledged"), for the durability checks.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error autocannon ships no type declarations
import autocannon from "autocannon";

export type Generator = "wrk" | "autocannon";

export interface LoadOptions {
  url: string;
  paths: string[];
  connections: number;
  durationSec: number;
  /** wrk threads (default 1: the server under test needs the other core) */
  threads?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** count 2xx answers per path (costs the generator a little) */
  countAcks?: boolean;
}

export interface LoadResult {
  generator: Generator;
  requests: number;
  ok: number;
  /** 2xx per second */
  perSecond: number;
  p50: number;
  p99: number;
  /** non-2xx answers, socket errors and timeouts */
  errors: number;
  /** wrk's breakdown: connect, read, write, status, timeout */
  errorsDetail?: string;
  /** path index → 2xx answers (when countAcks) */
  acked: Map<number, number>;
}

export function hasWrk(): boolean {
  return Bun.which("wrk") !== null;
}

let warnedFallback = false;

export function pickGenerator(requested: string | null): Generator {
  if (requested === "autocannon") return "autocannon";
  if (requested === "wrk" && !hasWrk()) throw new Error("wrk is not installed (apt-get install -y wrk)");
  if (hasWrk()) return "wrk";
  // the figures in BENCHMARKS.md are wrk's: autocannon's own CPU on the same two cores and its
  // whole-millisecond percentiles make its runs incomparable with them
  if (!warnedFallback) console.warn("wrk is not installed (apt-get install -y wrk): falling back to autocannon, whose figures do not compare with BENCHMARKS.md's");
  warnedFallback = true;
  return "autocannon";
}

export async function runLoad(gen: Generator, o: LoadOptions): Promise<LoadResult> {
  return gen === "wrk" ? runWrk(o) : runAutocannon(o);
}

const WRK_SCRIPT = `
local paths = {}
local n = 0
counts = {}
local i = 0
local method, body, extra
local threads = {}
local nthreads = 0

function setup(thread)
  nthreads = nthreads + 1
  thread:set("tid", nthreads)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(args[1]) do
    n = n + 1
    paths[n] = line
  end
  method = args[2]
  count = args[3] == "1"
  if args[4] ~= "" then body = args[4] end
  if args[5] and args[5] ~= "" then auth = args[5] end
  i = (tid or 1) * 7919
end

function request()
  i = i + 1
  local k = (i % n) + 1
  -- wrk.format takes these headers instead of wrk.headers, not on top of them
  return wrk.format(method, paths[k], { ["X-Request-Id"] = tostring(k), ["Authorization"] = auth, ["Content-Type"] = body and "application/json" or nil }, body)
end

function response(status, headers, b)
  if count and status >= 200 and status < 300 then
    local id = headers["x-request-id"] or headers["X-Request-Id"]
    if id then counts[id] = (counts[id] or 0) + 1 end
  end
end

function done(summary, latency, requests)
  local f = io.open(os.getenv("WRK_OUT"), "w")
  f:write(string.format("requests %d\\n", summary.requests))
  f:write(string.format("errors %d\\n", summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
  f:write(string.format("status_errors %d\\n", summary.errors.status))
  f:write(string.format("errors_detail connect=%d,read=%d,write=%d,status=%d,timeout=%d\\n", summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
  f:write(string.format("duration_us %d\\n", summary.duration))
  f:write(string.format("p50_us %d\\n", latency:percentile(50)))
  f:write(string.format("p99_us %d\\n", latency:percentile(99)))
  for _, t in ipairs(threads) do
    local c = t:get("counts")
    if c then for k, v in pairs(c) do f:write(string.format("ack %s %d\\n", k, v)) end end
  end
  f:close()
end
`;

async function runWrk(o: LoadOptions): Promise<LoadResult> {
  const extra = Object.keys(o.headers ?? {}).filter((k) => k.toLowerCase() !== "authorization");
  if (extra.length) throw new Error(`wrk runs here take only an Authorization header, not ${extra.join(", ")}`);
  const authorization = Object.entries(o.headers ?? {}).find(([k]) => k.toLowerCase() === "authorization")?.[1] ?? "";
  const dir = mkdtempSync(join(tmpdir(), "vigil-wrk-"));
  try {
    writeFileSync(join(dir, "paths"), o.paths.join("\n") + "\n");
    writeFileSync(join(dir, "script.lua"), WRK_SCRIPT);
    const out = join(dir, "out");
    const proc = Bun.spawn(
      ["wrk", "-t", String(o.threads ?? 1), "-c", String(o.connections), "-d", `${o.durationSec}s`, "--timeout", "10s", "-s", join(dir, "script.lua"), o.url,
        "--", join(dir, "paths"), o.method ?? "GET", o.countAcks ? "1" : "0", o.body ?? "", authorization],
      { stdout: "pipe", stderr: "pipe", env: { ...process.env, WRK_OUT: out } },
    );
    const killer = setTimeout(() => proc.kill(9), (o.durationSec + 60) * 1000);
    const code = await proc.exited;
    clearTimeout(killer);
    if (code !== 0) throw new Error(`wrk exited ${code}: ${await new Response(proc.stderr as ReadableStream).text()}`);
    const fields = new Map<string, number>();
    const acked = new Map<number, number>();
    let errorsDetail = "";
    for (const line of readFileSync(out, "utf8").split("\n")) {
      const parts = line.split(" ");
      if (parts[0] === "ack") acked.set(Number(parts[1]) - 1, Number(parts[2]));
      else if (parts[0] === "errors_detail") errorsDetail = parts[1]!;
      else if (parts.length === 2) fields.set(parts[0]!, Number(parts[1]));
    }
    const requests = fields.get("requests")!;
    const statusErrors = fields.get("status_errors")!;
    const ok = requests - statusErrors;
    const seconds = fields.get("duration_us")! / 1e6;
    return {
      generator: "wrk",
      requests,
      ok,
      perSecond: ok / seconds,
      p50: fields.get("p50_us")! / 1000,
      p99: fields.get("p99_us")! / 1000,
      errors: fields.get("errors")!,
      errorsDetail,
      acked,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(o: LoadOptions): Promise<LoadResult> {
  const acked = new Map<number, number>();
  let next = 0;
  const result = await autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.durationSec,
    headers: o.headers,
    requests: [
      {
        method: o.method ?? "GET",
        body: o.body,
        setupRequest: (req: { path: string }, context: { k?: number }) => {
          const k = next++ % o.paths.length;
          context.k = k;
          req.path = o.paths[k]!;
          return req;
        },
        onResponse: (status: number, _body: string, context: { k?: number }) => {
          if (o.countAcks && status >= 200 && status < 300 && context.k !== undefined) acked.set(context.k, (acked.get(context.k) ?? 0) + 1);
        },
      },
    ],
  });
  const ok = result["2xx"] as number;
  return {
    generator: "autocannon",
    requests: result.requests.total,
    ok,
    perSecond: ok / o.durationSec,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    acked,
  };
}

/** `fn` over `items` with at most `concurrency` in flight (warm-ups, fixtures through the API). */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Percentile (0-100) of unsorted numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
