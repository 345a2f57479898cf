import { bootstrapIfEmpty } from "../auth/bootstrap.ts";
import { ConfigError } from "../config/config.ts";
import { loadConfig } from "../config/load.ts";
import { SERVE_OPTIONS, type OptionSpec } from "../config/options.ts";
import { buildContext, loadSecretBox, type AppContext } from "../context.ts";
import { systemClock, type Clock } from "../lib/clock.ts";
import { createLogger, type LogSink } from "../lib/logger.ts";
import { buildHttpApp, buildProbeHttpApp, listen, type RunningServer } from "../server.ts";
import { startServices } from "../start-services.ts";
import { statSync } from "node:fs";
import { makePrivateDir } from "../lib/private-files.ts";
import { acquireDataLock } from "../store/data-lock.ts";
import { openStoreAt } from "../store/open-store.ts";
import { VERSION } from "../version.ts";
import { UsageError, type CliIo } from "./io.ts";

export const SHUTDOWN_GRACE_MS = 5000;

export function serveHelp(): string {
  const rows = (Object.values(SERVE_OPTIONS) as OptionSpec[]).map((o) => {
    const flag = `--${o.flag}${o.kind === "bool" ? "" : " VALUE"}`;
    return `  ${flag.padEnd(32)} ${o.help}${o.fallback ? ` (default ${o.fallback})` : ""} [env ${o.env}]`;
  });
  return `Usage: vigil serve [options]\n\nRuns the service: API, heartbeat endpoint, dashboard, status pages, checks.\n\nOptions (flags win over env):\n${rows.join("\n")}`;
}

/** A started instance: tests use this directly; `vigil serve` wraps it with signal handling. */
export interface Instance {
  ctx: AppContext;
  url: string;
  port: number;
  /** every route the server answers, for tests built from the route list */
  routes: RunningServer["routes"];
  shutdown(): Promise<void>;
}

/** Test seams: a clock of the test's choosing, a sink that captures log lines, a small bound of held check results. */
export interface InstanceOverrides {
  clock?: Clock;
  logSink?: LogSink;
  heldResultsLimit?: number;
}

export async function startInstance(argv: string[], env: CliIo["env"], overrides: InstanceOverrides = {}): Promise<Instance> {
  const config = loadConfig(argv, env);
  const log = createLogger(config.logLevel, "vigil", overrides.logSink);
  makePrivateDir(config.dataDir);
  if (statSync(config.dataDir).mode & 0o077) {
    // an existing directory keeps the mode its operator gave it (it may be shared on purpose);
    // Vigil's files in it are 0600 whatever it is
    log.warn("the data directory is open to other users; Vigil's files in it are private (0600), but chmod 700 keeps their names private too", { data: config.dataDir });
  }
  const releaseLock = acquireDataLock(config.dataDir);
  const store = await openStoreAt(config);
  const secrets = loadSecretBox(config.dataDir, config.secretKey);
  const ctx = buildContext({ config, store, log, clock: overrides.clock ?? systemClock, secrets });
  if (config.role === "leader") await bootstrapIfEmpty(ctx.db, config.dataDir, ctx.clock.now(), log);
  // read before the first check runs: a check must never go out under a policy not yet known
  if (config.role === "leader") await ctx.privateTargets.reload();
  const services = await startServices(ctx, { heldResultsLimit: overrides.heldResultsLimit });
  // a probe serves only /healthz and /readyz: no API, no accounts (docs/regions.md "Leader and probes")
  const app =
    config.role === "probe"
      ? (buildProbeHttpApp(ctx, () => services) as unknown as ReturnType<typeof buildHttpApp>)
      : buildHttpApp(ctx, { services, plugins: services.flatMap((s) => (s.plugin ? [s.plugin] : [])) });
  const server = listen(ctx, app);
  log.info("listening", { url: server.url, base_url: config.baseUrl, data: config.dataDir, role: config.role, region: config.region, version: VERSION });
  // SIGHUP: monitors and maintenance windows were written to the database by another process
  // (`vigil import` on the same data directory, README "Coming from Uptime Kuma"): read them all
  // again, as after a lost connection to the other instances
  const onHangup = () => {
    log.info("SIGHUP: reloading monitor definitions and maintenance windows from the database");
    ctx.events.emit("monitors.resync", {});
  };
  process.on("SIGHUP", onHangup);

  let stopping: Promise<void> | null = null;
  const shutdown = () =>
    (stopping ??= (async () => {
      log.info("shutting down");
      process.off("SIGHUP", onHangup);
      const deadline = Date.now() + SHUTDOWN_GRACE_MS;
      for (const s of services) s.drain?.();
      await Promise.race([server.stop(), Bun.sleep(SHUTDOWN_GRACE_MS)]);
      for (const s of [...services].reverse()) {
        try {
          await s.stop(Math.max(0, deadline - Date.now()));
        } catch (err) {
          log.error("service failed to stop cleanly", { service: s.name, error: String(err) });
        }
      }
      await store.close();
      releaseLock();
      log.info("stopped");
    })());
  return { ctx, url: server.url, port: server.port, routes: server.routes, shutdown };
}

export async function serveCommand(args: string[], io: CliIo): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) return io.out(serveHelp()), 0;
  let instance: Instance;
  try {
    instance = await startInstance(args, io.env);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      instance.shutdown().then(resolve, resolve);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  return 0;
}
