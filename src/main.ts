#!/usr/bin/env bun
import { accountCommand } from "./cli/account.ts";
import { applyCommand } from "./cli/apply.ts";
import { backupCommand, restoreCommand } from "./cli/backup.ts";
import { exportCommand } from "./cli/export.ts";
import { healthcheckCommand } from "./cli/healthcheck.ts";
import { processIo, UsageError, type CliIo } from "./cli/io.ts";
import { importCommand } from "./cli/import.ts";
import { migrateCommand } from "./cli/migrate.ts";
import { peerCommand } from "./cli/peer.ts";
import { serveCommand } from "./cli/serve.ts";
import { tokenCommand } from "./cli/token.ts";
import { userCommand } from "./cli/user.ts";
import { VERSION, versionLine } from "./version.ts";

type Command = (args: string[], io: CliIo) => Promise<number>;

/** One entry per command group; each group's file holds its help text. */
const COMMANDS: Record<string, { run: Command; summary: string }> = {
  serve: { run: serveCommand, summary: "run the service (API, heartbeats, dashboard, checks)" },
  account: { run: accountCommand, summary: "create and list accounts" },
  token: { run: tokenCommand, summary: "create, list and revoke API tokens" },
  peer: { run: peerCommand, summary: "create, list and revoke probe peers" },
  user: { run: userCommand, summary: "create, list and delete dashboard users" },
  backup: { run: backupCommand, summary: "write a consistent copy of the database while serving" },
  restore: { run: restoreCommand, summary: "restore a checked backup (SQLite: server stopped; PostgreSQL: into an empty database)" },
  import: { run: importCommand, summary: "import monitors, channels, maintenance and status pages from Uptime Kuma or Gatus" },
  export: { run: exportCommand, summary: "print an account as a configuration file (YAML) through the API" },
  apply: { run: applyCommand, summary: "make an account match a configuration file through the API (--plan, --prune)" },
  migrate: { run: migrateCommand, summary: "copy an SQLite instance into an empty PostgreSQL database (server stopped)" },
  healthcheck: { run: healthcheckCommand, summary: "exit 0 when the local server is ready, 1 when not (for Docker and supervisors)" },
};

const HELP = `Vigil ${VERSION}: self-hosted uptime monitoring in one executable.

Usage: vigil <command> [options]

Commands:
${Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(11)} ${c.summary}`).join("\n")}

Run "vigil <command> --help" for a command's options. Every command takes --data DIR (env VIGIL_DATA, default ./data).
"vigil --version" (or -v) prints the version, the commit it was built from and the platform.`;

export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    io.out(HELP);
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-v") return io.out(versionLine()), 0;
  const command = COMMANDS[name];
  if (!command) {
    io.err(`error: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`error: ${e.message}\nRun "vigil ${name} --help" for usage.`);
      return 2;
    }
    io.err(`error: ${(e as Error).message}`);
    return 1;
  }
}

if (import.meta.main) {
  // Everything Vigil writes (data directory, database and its WAL, journal, keys, backups) is for
  // its own user alone (README "Security"): 0700 directories and 0600 files, whatever the login
  // umask. The modes are also set where those files are made, for code that runs without this.
  process.umask(0o077);
  const code = await runCli(process.argv.slice(2));
  process.exit(code);
}
