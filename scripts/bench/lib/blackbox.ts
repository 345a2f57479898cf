/**
 * Prometheus's blackbox_exporter (Debian's `prometheus-blackbox-exporter`) as the saturation
 * bench's reference: started on loopback with one http module, driven by wrk against its
 * /probe?target=… endpoint over the same targets Vigil's monitors check. wrk's Lua reads every
 * answer: probe_success says whether the probe passed, probe_duration_seconds how long blackbox
 * measured it (kept as a histogram, like Vigil's recorded latency).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, type Child } from "./proc.ts";

export const BLACKBOX = "prometheus-blackbox-exporter";

/** Upper bounds (ms) of the probe-duration histogram kept by the wrk script; the last bucket is open. */
export const DURATION_BUCKETS_MS = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];

const CONFIG = `modules:
  http_2xx:
    prober: http
    timeout: 5s
    http:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
`;

const WRK_SCRIPT = `
local paths = {}
local n = 0
local i = 0
local threads = {}
local bounds = { ${DURATION_BUCKETS_MS.join(", ")} }

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  for line in io.lines(args[1]) do
    n = n + 1
    paths[n] = line
  end
  passed = 0
  failed = 0
  hist = {}
  for b = 1, #bounds + 1 do hist[b] = 0 end
  i = (tid or 1) * 7919
end

function request()
  i = i + 1
  return wrk.format("GET", paths[(i % n) + 1])
end

function response(status, headers, body)
  if status == 200 and body:find("\\nprobe_success 1") then passed = passed + 1 else failed = failed + 1 end
  local d = body:match("\\nprobe_duration_seconds ([%d%.eE%+%-]+)")
  if d then
    local ms = tonumber(d) * 1000
    local b = 1
    while b <= #bounds and ms > bounds[b] do b = b + 1 end
    hist[b] = hist[b] + 1
  end
end

function done(summary, latency, requests)
  local f = io.open(os.getenv("WRK_OUT"), "w")
  local p, x = 0, 0
  local h = {}
  for b = 1, #bounds + 1 do h[b] = 0 end
  for _, t in ipairs(threads) do
    p = p + (t:get("passed") or 0)
    x = x + (t:get("failed") or 0)
    local th = t:get("hist")
    if th then for b = 1, #bounds + 1 do h[b] = h[b] + (th[b] or 0) end end
  end
  f:write(string.format("requests %d\\n", summary.requests))
  f:write(string.format("errors %d\\n", summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
  f:write(string.format("duration_us %d\\n", summary.duration))
  f:write(string.format("passed %d\\n", p))
  f:write(string.format("failed %d\\n", x))
  for b = 1, #bounds + 1 do f:write(string.format("bucket %d %d\\n", b, h[b])) end
  f:close()
end
`;

export interface BlackboxProcess {
  proc: Child;
  url: string;
  stop(): Promise<void>;
}

/** Starts blackbox_exporter on 127.0.0.1:`port`; waits (10 s at most) until it answers. */
export async function startBlackbox(port: number): Promise<BlackboxProcess> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-bb-"));
  writeFileSync(join(dir, "blackbox.yml"), CONFIG);
  const proc = Bun.spawn([BLACKBOX, `--config.file=${join(dir, "blackbox.yml")}`, `--web.listen-address=127.0.0.1:${port}`], { stdout: "ignore", stderr: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    proc.kill("SIGTERM");
    const killer = setTimeout(() => proc.kill(9), 5000);
    await proc.exited;
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/-/healthy`)).ok) return { proc, url, stop };
    } catch {}
    await Bun.sleep(100);
  }
  await stop();
  throw new Error(`${BLACKBOX} did not answer on ${url}`);
}

export interface ProbeRun {
  seconds: number;
  probes: number;
  passed: number;
  failed: number;
  /** transport errors and timeouts wrk saw */
  errors: number;
  /** per DURATION_BUCKETS_MS bucket (the last open), blackbox's own probe_duration_seconds */
  durations: number[];
  /** CPU seconds used in the run by blackbox_exporter and by wrk */
  blackboxCpu: number;
  wrkCpu: number;
}

/** wrk (one thread, `connections` at once) against /probe over `targets` (host:port) for `seconds`. */
export async function driveBlackbox(bb: BlackboxProcess, targets: string[], connections: number, seconds: number): Promise<ProbeRun> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-bbwrk-"));
  try {
    writeFileSync(join(dir, "paths"), targets.map((t) => `/probe?module=http_2xx&target=http://${t}/bb`).join("\n") + "\n");
    writeFileSync(join(dir, "script.lua"), WRK_SCRIPT);
    const out = join(dir, "out");
    const cpu0 = cpuSeconds(bb.proc.pid);
    const proc = Bun.spawn(["wrk", "-t", "1", "-c", String(connections), "-d", `${seconds}s`, "--timeout", "10s", "-s", join(dir, "script.lua"), bb.url, "--", join(dir, "paths")], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, WRK_OUT: out },
    });
    const killer = setTimeout(() => proc.kill(9), (seconds + 60) * 1000);
    const code = await proc.exited;
    clearTimeout(killer);
    const blackboxCpu = cpuSeconds(bb.proc.pid) - cpu0;
    if (code !== 0) throw new Error(`wrk exited ${code}: ${await new Response(proc.stderr as ReadableStream).text()}`);
    const usage = proc.resourceUsage();
    const wrkCpu = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6 : NaN;
    const fields = new Map<string, number>();
    const durations = new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0);
    for (const line of readFileSync(out, "utf8").split("\n")) {
      const parts = line.split(" ");
      if (parts[0] === "bucket") durations[Number(parts[1]) - 1] = Number(parts[2]);
      else if (parts.length === 2) fields.set(parts[0]!, Number(parts[1]));
    }
    return {
      seconds: fields.get("duration_us")! / 1e6,
      probes: fields.get("requests")!,
      passed: fields.get("passed")!,
      failed: fields.get("failed")!,
      errors: fields.get("errors")!,
      durations,
      blackboxCpu,
      wrkCpu,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Quantile of bucket counts as the holding bucket's upper bound (Infinity: the open bucket). */
export function bucketQuantile(counts: number[], q: number): number {
  const n = counts.reduce((a, b) => a + b, 0);
  if (n === 0) return NaN;
  const rank = Math.ceil(q * n);
  let cum = 0;
  for (let i = 0; i < counts.length; i++) {
    cum += counts[i]!;
    if (cum >= rank) return i < DURATION_BUCKETS_MS.length ? DURATION_BUCKETS_MS[i]! : Infinity;
  }
  return Infinity;
}
