/**
 * The dashboard's monitor list in Chromium on a big account:
 *   npm run bench -- dashboard [--monitors N] [--checks-per-monitor N] [--loads N] [--fresh]
 *
 * A fixture of N monitors (default 10,000; paused, so nothing is checked; statuses and types mixed;
 * in 10 groups; two tags each) with `checks-per-monitor` checks each (one a minute, the newest a
 * minute ago; no rollups, so the uptime over 24 h is counted from raw checks, its dearest form) and a
 * user, written with bun:sqlite and cached under the temp dir (copied for each run). `vigil serve`
 * runs on the copy; playwright-core's Chromium (Debian's /usr/bin/chromium) signs in through the
 * form and loads the list `loads` times, each in a new tab: first contentful paint and the load
 * event from the Performance API, p50 and max. References in the same run, their loads interleaved
 * with the list's: the same HTML (fetched once from the server, with its CSS and script) served as a
 * static file by Bun.serve, and a small page (the sign-in form). Then all three again, each
 * navigated to in one open tab (a new tab's FCP includes Chromium making the tab's renderer). Then the
 * server's own time for a few list addresses (sorts, search, a deep page), p50 over `loads` fetches.
 * Loopback only; bounded in time.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { createUser } from "../../src/auth/users.ts";
import { openStore } from "../../src/store/database.ts";
import { fmt, percentile } from "./lib/load.ts";
import { machine, startVigil, waitIdle } from "./lib/proc.ts";
import { seedAccount } from "./lib/seed.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-quic", "--disable-sync"];
const PASSWORD = "bench horse battery staple";
const GROUPS = 10;
const STATUSES = ["up", "up", "up", "up", "up", "up", "up", "up", "down", "degraded"] as const;
const TYPES = ["http", "http", "http", "tcp", "dns"] as const;
const WORDS = ["billing", "checkout", "search", "auth", "cdn", "mail", "payments", "reports", "gateway", "static"];

interface Options {
  monitors: number;
  checksPerMonitor: number;
  loads: number;
  fresh: boolean;
}

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: 10_000, checksPerMonitor: 30, loads: 7, fresh: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--monitors") o.monitors = v();
    else if (a === "--checks-per-monitor") o.checksPerMonitor = v();
    else if (a === "--loads") o.loads = Math.min(Math.max(1, v()), 50);
    else if (a === "--fresh") o.fresh = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

/** Builds (or reuses) the fixture directory; it holds a user `bench` with PASSWORD. */
async function fixture(o: Options): Promise<string> {
  const dir = join(tmpdir(), `vigil-bench-dashboard-fixture-${o.monitors}x${o.checksPerMonitor}-v1`);
  const done = join(dir, "bench-ready");
  if (!o.fresh && existsSync(done)) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const store = openStore(dir);
  const account = seedAccount(store);
  const now = Date.now();
  const groups = Array.from({ length: GROUPS }, (_, g) => Number((store.sqlite.query("INSERT INTO monitor_groups (account_id, name, sort_order, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id").get(account, `group ${g}`, g, now, now) as { id: number }).id));
  const monitor = store.sqlite.prepare(
    `INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at, is_paused, last_status, last_checked_at, state_changed_at, group_id)
     VALUES (?, ?, ?, ?, 60, 5000, ?, ?, 1, ?, ?, ?, ?) RETURNING id`,
  );
  const tag = store.sqlite.prepare("INSERT INTO monitor_tags (monitor_id, account_id, tag) VALUES (?, ?, ?)");
  const check = store.sqlite.prepare("INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms, http_code) VALUES (?, 'local', ?, ?, ?, ?)");
  for (let i = 0; i < o.monitors; i += 500) {
    store.sqlite.transaction(() => {
      for (let j = i; j < Math.min(o.monitors, i + 500); j++) {
        const type = TYPES[j % TYPES.length]!;
        const word = WORDS[j % WORDS.length]!;
        // loopback targets: nothing here is ever meant to be reached (the monitors are paused)
        const target = type === "http" ? `http://127.0.0.1:9/${word}/${j}` : type === "tcp" ? `127.0.0.1:${10_000 + (j % 50_000)}` : `${word}-${j}.localhost`;
        const { id } = monitor.get(account, `${word} service ${j}`, type, target, now, now, STATUSES[j % STATUSES.length]!, now - 60_000, now, groups[j % GROUPS]!) as { id: number };
        tag.run(id, account, `env:${j % 3}`);
        tag.run(id, account, `team/${j % 7}`);
        for (let k = 0; k < o.checksPerMonitor; k++) {
          const down = (j * 7 + k) % 13 === 0;
          check.run(id, down ? "down" : "up", now - (o.checksPerMonitor - k) * 60_000, down ? null : 20 + ((j + k) % 200), down ? null : 200);
        }
      }
    })();
  }
  await createUser(store.db, { accountId: account, username: "bench", password: PASSWORD, now });
  store.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  await store.close();
  writeFileSync(done, "ok");
  return dir;
}

interface Paint {
  fcp: number;
  load: number;
}

/**
 * Loads `url` `n` times, each in a new tab of `context` (a cold start: Chromium makes the tab's
 * renderer within the navigation), or with `tab` in that open tab (a person moving between pages of
 * the dashboard: a new document in a warm renderer); FCP and the load event, ms from navigation start.
 */
async function paints(context: BrowserContext, url: string, n: number, tab?: Page): Promise<Paint[]> {
  const out: Paint[] = [];
  for (let i = 0; i < n; i++) {
    const page = tab ?? (await context.newPage());
    await page.goto(url, { waitUntil: "load", timeout: 60_000 });
    // the paint entry may be queued after the load event: wait for it (bounded)
    const p = await page.evaluate(
      () =>
        new Promise<{ fcp: number; load: number }>((resolve) => {
          const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
          const load = nav ? nav.loadEventEnd || nav.loadEventStart : NaN;
          const timer = setTimeout(() => resolve({ fcp: NaN, load }), 3000);
          new PerformanceObserver((list) => {
            const e = list.getEntriesByName("first-contentful-paint")[0];
            if (!e) return;
            clearTimeout(timer);
            resolve({ fcp: e.startTime, load });
          }).observe({ type: "paint", buffered: true });
        }),
    );
    out.push(p);
    if (!tab) await page.close();
  }
  return out;
}

function summary(label: string, ps: Paint[]): string {
  // a load whose paint Chromium did not report (no entry by the load event) is left out and counted
  const fcps = ps.map((p) => p.fcp).filter((v) => Number.isFinite(v));
  const missing = ps.length - fcps.length;
  return `${label.padEnd(44)} FCP p50 ${fmt(percentile(fcps, 50))} ms, max ${fmt(Math.max(...fcps))} ms${missing ? ` (${missing} of ${ps.length} without an FCP entry)` : ""}; load p50 ${fmt(percentile(ps.map((p) => p.load), 50))} ms`;
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  if (!existsSync(CHROMIUM)) {
    console.error(`Chromium is not installed at ${CHROMIUM} ("apt-get install -y chromium")`);
    return 2;
  }
  console.log(`dashboard bench: ${o.monitors.toLocaleString("en-US")} monitors × ${o.checksPerMonitor} checks, ${o.loads} loads each; ${machine()}`);
  const t0 = performance.now();
  const source = await fixture(o);
  console.log(`fixture ready in ${((performance.now() - t0) / 1000).toFixed(1)} s (${source})`);
  const work = mkdtempSync(join(tmpdir(), "vigil-bench-dashboard-"));
  cpSync(source, work, { recursive: true });
  const vigil = await startVigil(work);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
  let reference: ReturnType<typeof Bun.serve> | null = null;
  try {
    await waitIdle(vigil.pid);
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const login = await context.newPage();
    await login.goto(`${vigil.url}/login`);
    await login.getByLabel("Username").fill("bench");
    await login.getByLabel("Password").fill(PASSWORD);
    await login.getByRole("button", { name: "Sign in" }).click();
    await login.waitForURL(`${vigil.url}/`, { timeout: 60_000 });
    await login.close();
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");

    // the reference: the list's own HTML, CSS and script, as static files from Bun.serve
    const html = await (await fetch(`${vigil.url}/`, { headers: { cookie } })).text();
    const assets = new Map<string, { body: ArrayBuffer; type: string }>();
    for (const m of html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)) {
      const res = await fetch(vigil.url + m[1]!);
      assets.set(m[1]!, { body: await res.arrayBuffer(), type: res.headers.get("content-type") ?? "application/octet-stream" });
    }
    reference = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname;
        const asset = assets.get(path);
        if (asset) return new Response(asset.body, { headers: { "content-type": asset.type } });
        return path === "/" ? new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }) : new Response("", { status: 404 });
      },
    });
    const rows = (html.match(/<tr data-monitor=/g) ?? []).length;
    console.log(`page: ${(html.length / 1024).toFixed(0)} KiB of HTML, ${rows} rows`);

    // one load to warm both (caches, JIT), not counted
    await paints(context, `${vigil.url}/`, 1);
    await paints(context, `http://127.0.0.1:${reference.port}/`, 1);
    // interleaved, so a change in the box's load falls on all three alike
    const served: Paint[] = [], staticRef: Paint[] = [], floor: Paint[] = [];
    for (let i = 0; i < o.loads; i++) {
      served.push(...(await paints(context, `${vigil.url}/`, 1)));
      staticRef.push(...(await paints(context, `http://127.0.0.1:${reference.port}/`, 1)));
      floor.push(...(await paints(context, `${vigil.url}/login`, 1)));
    }
    console.log(summary("vigil serve: GET / (page 1)", served));
    console.log(summary("reference: the same files from Bun.serve", staticRef));
    console.log(summary("floor: GET /login (a small page)", floor));
    // the same three again, each navigated to in one open tab
    const tab = await context.newPage();
    await paints(context, `${vigil.url}/`, 1, tab);
    const servedTab: Paint[] = [], staticTab: Paint[] = [], floorTab: Paint[] = [];
    for (let i = 0; i < o.loads; i++) {
      servedTab.push(...(await paints(context, `${vigil.url}/`, 1, tab)));
      staticTab.push(...(await paints(context, `http://127.0.0.1:${reference.port}/`, 1, tab)));
      floorTab.push(...(await paints(context, `${vigil.url}/login`, 1, tab)));
    }
    await tab.close();
    console.log(summary("in one tab: vigil serve GET / (page 1)", servedTab));
    console.log(summary("in one tab: the same files from Bun.serve", staticTab));
    console.log(summary("in one tab: GET /login (a small page)", floorTab));

    // the server's own time for a few addresses of the list
    for (const path of ["/", "/?sort=name", "/?sort=state", "/?sort=uptime", "/?q=billing", `/?page=${Math.max(1, Math.floor(o.monitors / 100))}`, "/monitors/rows"]) {
      const times: number[] = [];
      for (let i = 0; i < o.loads; i++) {
        const t = performance.now();
        const res = await fetch(vigil.url + path, { headers: { cookie } });
        await res.arrayBuffer();
        times.push(performance.now() - t);
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      }
      console.log(`${`server: GET ${path}`.padEnd(44)} p50 ${fmt(percentile(times, 50))} ms, max ${fmt(Math.max(...times))} ms`);
    }
    await context.close();
  } finally {
    reference?.stop(true);
    await browser.close();
    await vigil.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return 0;
}
