import { readFileSync } from "node:fs";
import { announceChanges, type RelayedEvent } from "../cluster/change-relay.ts";
import { ConfigError } from "../config/config.ts";
import { loadConfig } from "../config/load.ts";
import { buildContext, loadSecretBox, type AppEvents } from "../context.ts";
import { applyImport } from "../import/apply.ts";
import { GatusFileError, planGatusImport } from "../import/gatus-plan.ts";
import { planKumaImport } from "../import/kuma-plan.ts";
import type { ImportPlan } from "../import/plan.ts";
import { systemClock } from "../lib/clock.ts";
import { createLogger } from "../lib/logger.ts";
import { randomToken } from "../lib/tokens.ts";
import { findAccountByName } from "../store/accounts.ts";
import { lockHolder } from "../store/data-lock.ts";
import { KumaFileError, readKumaFile } from "../store/uptime-kuma-file.ts";
import { dataDirOf, databaseUrlOf, openCommandStore, parseCommand, UsageError, type CliIo } from "./io.ts";

export const IMPORT_HELP = `Usage:
  vigil import uptime-kuma FILE --account NAME [--dry-run] [--data DIR | --database-url URL]
      import an Uptime Kuma database (its kuma.db, 1.23 or 2.x; Kuma may keep running): its
      monitors, notifications, maintenances and status pages
  vigil import gatus FILE --account NAME [--env NAME...] [--dry-run] [--data DIR | --database-url URL]
      import a Gatus configuration file: its endpoints and their conditions, external endpoints,
      alerting providers and maintenance. $VAR and \${VAR} in it are read from the environment only
      for the variables named with --env (repeatable or comma-separated); a file that reads any
      other is refused, naming them

Each item prints one line: created, skipped with the reason, or already in the account (a second
run creates only what is missing, matching by name). --dry-run writes nothing and says what would
happen. A server running on the same data directory or database picks the new monitors up at once.

Options:
  --heartbeat-url URL   base of the ping URLs printed for heartbeat monitors (env VIGIL_HEARTBEAT_URL,
                        else --base-url / VIGIL_BASE_URL, else http://localhost:8080)
  --base-url URL        as for vigil serve

README "Coming from Uptime Kuma" and "Coming from Gatus" say what maps to what.`;

const SOURCES = ["uptime-kuma", "gatus"] as const;

function planOf(source: (typeof SOURCES)[number], file: string, env: CliIo["env"], allowedEnv: ReadonlySet<string>, now: number): ImportPlan {
  if (source === "uptime-kuma") return planKumaImport(readKumaFile(file), now);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new GatusFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return planGatusImport(text, env, allowedEnv);
}

export async function importCommand(args: string[], io: CliIo): Promise<number> {
  const [source, ...rest] = args;
  if (source === "--help" || source === "-h") return io.out(IMPORT_HELP), 0;
  // options before the source (vigil import --data DIR): the source is missing
  if (!source || source.startsWith("-")) return io.out(IMPORT_HELP), 2;
  if (!(SOURCES as readonly string[]).includes(source)) throw new UsageError(`unknown import source "${source}" (uptime-kuma or gatus)`);
  const { values, positionals } = parseCommand(rest, { account: { type: "string" }, "dry-run": { type: "boolean" }, "heartbeat-url": { type: "string" }, "base-url": { type: "string" }, env: { type: "string", multiple: true } }, 1);
  if (values.help) return io.out(IMPORT_HELP), 0;
  const file = positionals[0];
  if (!file) throw new UsageError(`import ${source} needs the FILE to read`);
  if (!values.account) throw new UsageError(`import ${source} needs --account NAME`);
  const allowedEnv = new Set(((values.env as string[] | undefined) ?? []).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== ""));
  const badName = [...allowedEnv].find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  if (badName !== undefined) throw new UsageError(`--env takes variable names (letters, digits and _), not "${badName}"`);
  if (allowedEnv.size && source !== "gatus") throw new UsageError(`--env is for import gatus: an ${source} file reads no environment`);
  const dataDir = dataDirOf(values, io.env);
  const databaseUrl = databaseUrlOf(values, io.env);
  let config;
  try {
    const flags = (["heartbeat-url", "base-url"] as const).flatMap((f) => (values[f] ? [`--${f}`, values[f] as string] : []));
    config = loadConfig(["--data", dataDir, ...(databaseUrl ? ["--database-url", databaseUrl] : []), ...flags], io.env);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }

  let plan: ImportPlan;
  try {
    plan = planOf(source as (typeof SOURCES)[number], file, io.env, allowedEnv, Date.now());
  } catch (e) {
    if (e instanceof KumaFileError || e instanceof GatusFileError) {
      io.err(`error: cannot import ${file}: ${e.message}`);
      return 1;
    }
    throw e;
  }

  const store = await openCommandStore(values, io.env);
  // the services log to stderr, warnings and errors only: stdout is the import's report
  const log = createLogger("warn", "vigil", (l) => io.err(l));
  const ctx = buildContext({ config, store, log, clock: systemClock, secrets: loadSecretBox(dataDir, config.secretKey) });
  const changes: { event: RelayedEvent; payload: AppEvents[RelayedEvent] }[] = [];
  const offs = (["monitor.changed", "maintenance_window.changed"] as const).map((event) => ctx.events.on(event, (payload) => void changes.push({ event, payload })));
  try {
    const account = await findAccountByName(store.db, values.account as string);
    if (!account) {
      io.err(`error: no account named "${values.account}" (see: vigil account list)`);
      return 1;
    }
    await ctx.privateTargets.reload();
    await applyImport(ctx, { accountId: account.id, requestId: `import-${randomToken(6)}` }, plan, { dryRun: values["dry-run"] === true, out: io.out });
    await ctx.writes.close();
    if (changes.length) await tellServers(store, dataDir, changes, io);
    return 0;
  } finally {
    for (const off of offs) off();
    await store.close();
  }
}

/**
 * A server running on the data directory or database learns of the new monitors and windows at
 * once: on PostgreSQL through the notices the instances exchange (README "Several instances"), on
 * SQLite by a SIGHUP to the server holding the data directory, which reads them all again.
 */
async function tellServers(store: Awaited<ReturnType<typeof openCommandStore>>, dataDir: string, changes: Parameters<typeof announceChanges>[2], io: CliIo): Promise<void> {
  if (store.engine === "postgres") {
    await announceChanges(store, `import-${randomToken(6)}`, changes);
    return;
  }
  const pid = lockHolder(dataDir);
  if (pid === null || pid === process.pid) return;
  process.kill(pid, "SIGHUP");
  io.out(`told the server running on ${dataDir} (pid ${pid}) to load the new monitors and maintenance windows`);
}
