import { ApiCallError } from "../config-as-code/api-client.ts";
import { readAccount } from "../config-as-code/current-state.ts";
import { exportYaml } from "../config-as-code/export.ts";
import { apiClientOf, SERVER_OPTIONS } from "./config-server.ts";
import { parseCommand, type CliIo } from "./io.ts";

export const EXPORT_HELP = `Usage:
  vigil export --server URL [--token T] > vigil.yaml

Prints the account of the token (env VIGIL_TOKEN when --token is not given) as a configuration
file: its groups, notification channels, monitors, maintenance windows and status pages, keyed by
external_id (monitor-42 and the like for resources without one), secrets as \${ENV_NAME}
placeholders. vigil apply -f vigil.yaml makes an account match it. docs/configuration-as-code.md
describes the format.`;

export async function exportCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, SERVER_OPTIONS);
  if (values.help) return io.out(EXPORT_HELP), 0;
  const { api, server } = apiClientOf("export", values, io);
  try {
    const { text } = exportYaml(await readAccount(api), server);
    io.out(text.trimEnd());
    return 0;
  } catch (e) {
    if (!(e instanceof ApiCallError)) throw e;
    io.err(`error: ${server} answered ${e.status} ${e.code}: ${e.message}`);
    return 1;
  }
}
