/**
 * Which YAML library reads configuration files (README "Configuration as code"), by measurement:
 *   npm run bench -- yaml-libs [--monitors N] [--rounds N] [--skip-compile]
 *
 * Builds the file `vigil export` writes for an account of N monitors (default 1,000, with groups,
 * channels, a window and a status page), then times reading it, each candidate in turn, rounds
 * rotated: `yaml` (eemeli) parseDocument with a LineCounter, as apply reads a file (positions kept
 * for the line of each problem), `yaml` parse (no positions), js-yaml load, and Bun.YAML.parse as the
 * reference that adds nothing (its errors carry no line). Then, unless --skip-compile, each library
 * alone in a small program built with `bun build --compile --minify`: its size beside an empty one's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LineCounter, parse, parseDocument, stringify } from "yaml";
import { compileEach } from "./lib/compile-size.ts";
import { ROOT } from "./lib/proc.ts";

interface Options { monitors: number; rounds: number; compile: boolean }

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: 1000, rounds: 20, compile: true };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--monitors") o.monitors = Math.min(Math.max(1, Number(args[++i])), 100_000);
    else if (a === "--rounds") o.rounds = Math.min(Math.max(1, Number(args[++i])), 1000);
    else if (a === "--skip-compile") o.compile = false;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

/** An export-shaped file: the attributes an http monitor of a real account has. */
function exportOf(n: number): string {
  const monitors: Record<string, unknown> = {};
  for (let i = 1; i <= n; i++) {
    monitors[`service-${i}`] = {
      name: `Service ${i}`, monitor_type: "http", target: `https://service-${i}.example.com/health`, interval_sec: 60, timeout_ms: 5000,
      group: `group-${i % 10}`, tags: ["env:prod", `team/${i % 7}`], notification_channels: ["ops", "pager"], expected_http_codes: "200-299",
      api_headers_json: { "X-Probe": "vigil" }, api_auth_type: "bearer", api_auth_bearer_token: `\${VIGIL_MONITOR_SERVICE_${i}_API_AUTH_BEARER_TOKEN}`,
      ...(i > 1 ? { depends_on: [`service-${i - 1}`] } : {}),
    };
  }
  const groups = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`group-${i}`, { name: `Group ${i}`, sort_order: i }]));
  const channels = { ops: { name: "Ops", channel_type: "webhook", url: "${VIGIL_CHANNEL_OPS_URL}" }, pager: { name: "Pager", channel_type: "pagerduty", pagerduty_routing_key: "${VIGIL_CHANNEL_PAGER_PAGERDUTY_ROUTING_KEY}" } };
  const windows = { sunday: { name: "Sunday", monitors: Object.keys(monitors).slice(0, 100), schedule: "0 3 * * 0", duration_sec: 3600 } };
  const pages = { public: { name: "Public", slug: "public", monitors: Object.keys(monitors).slice(0, 50) } };
  return "# yaml-language-server: $schema=http://localhost:8080/api/v1/config-schema.json\n" + stringify({ version: 1, groups, notification_channels: channels, monitors, maintenance_windows: windows, status_pages: pages }, { lineWidth: 0 });
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const text = exportOf(o.monitors);
  const jsYaml = (await import("js-yaml" as string)) as { load(text: string): unknown };
  const candidates: [string, () => unknown][] = [
    ["yaml parseDocument+LineCounter", () => {
      const lineCounter = new LineCounter();
      const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
      if (doc.errors.length) throw doc.errors[0];
      return doc.toJS();
    }],
    ["yaml parse", () => parse(text)],
    ["js-yaml load", () => jsYaml.load(text)],
    ["Bun.YAML.parse (reference)", () => Bun.YAML.parse(text)],
  ];
  const reference = JSON.stringify(Bun.YAML.parse(text));
  for (const [name, run] of candidates) if (JSON.stringify(run()) !== reference) console.log(`  ${name}: reads the file differently from Bun.YAML`);
  console.log(`file: ${o.monitors} monitors, ${(text.length / 1024).toFixed(0)} KiB, ${text.split("\n").length} lines; ${o.rounds} rounds, order rotated`);
  const times = new Map<string, number[]>(candidates.map(([n]) => [n, []]));
  for (let r = 0; r < o.rounds; r++) {
    for (let i = 0; i < candidates.length; i++) {
      const [name, run] = candidates[(i + r) % candidates.length]!;
      const t0 = performance.now();
      run();
      times.get(name)!.push(performance.now() - t0);
    }
  }
  for (const [name, xs] of times) console.log(`  ${name.padEnd(31)} p50 ${percentile(xs, 50).toFixed(1)} ms, p90 ${percentile(xs, 90).toFixed(1)} ms, min ${Math.min(...xs).toFixed(1)} ms`);

  if (!o.compile) return 0;
  console.log("\nbun build --compile --minify, each library alone:");
  const dir = mkdtempSync(join(tmpdir(), "vigil-yaml-bench-"));
  try {
    for (const c of compileEach(dir, [
      ["yaml", join(ROOT, "scripts/bench/lib/yaml-compile-yaml.ts")],
      ["js-yaml", join(ROOT, "scripts/bench/lib/yaml-compile-js-yaml.ts")],
    ])) {
      if ("error" in c) {
        console.log(`  ${c.name.padEnd(14)} ${c.error}`);
        continue;
      }
      const run = Bun.spawnSync([c.exe], { stdout: "pipe", stderr: "pipe", timeout: 30_000 });
      const out = run.exitCode === 0 ? run.stdout.toString().trim() : `exit ${run.exitCode}`;
      console.log(`  ${c.name.padEnd(14)} ${c.bytes.toLocaleString("en")} bytes (+${(c.overEmpty / 1024).toFixed(0)} KiB over the empty program); runs: ${out.slice(0, 80)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return 0;
}
