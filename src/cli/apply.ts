import { readFileSync } from "node:fs";
import { ApiCallError } from "../config-as-code/api-client.ts";
import { applyChanges, ApplyError } from "../config-as-code/apply.ts";
import { readAccount } from "../config-as-code/current-state.ts";
import { loadConfigFile } from "../config-as-code/load-file.ts";
import { changeLine, planChanges } from "../config-as-code/plan.ts";
import { ConfigFileError } from "../config-as-code/yaml-source.ts";
import { apiClientOf, SERVER_OPTIONS } from "./config-server.ts";
import { parseCommand, UsageError, type CliIo } from "./io.ts";

export const APPLY_HELP = `Usage:
  vigil apply -f FILE --server URL [--token T] [--plan] [--prune] [--send-secrets]

Makes the account of the token (env VIGIL_TOKEN when --token is not given) match the
configuration file through the API, printing one line per change:
  + create monitor api
  ~ update monitor api: interval_sec, group
  - delete group old (Old group)
The whole file is checked first (its shape, references, \${ENV_NAME} variables, the API's rules):
a bad file changes nothing, and each problem names its line and field. A second apply of the same
file changes nothing. -f - reads the file from stdin.

  --plan          print the changes, make none
  --prune         also delete the resources of the account the file does not name
  --send-secrets  send every secret of the file again (to rotate one: change the variable, then
                  apply with --send-secrets); otherwise secrets go on create and when the API
                  requires them again (a target moved to another origin or server)

docs/configuration-as-code.md describes the format, matching and secrets.`;

export async function applyCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, { ...SERVER_OPTIONS, file: { type: "string", short: "f" }, plan: { type: "boolean" }, prune: { type: "boolean" }, "send-secrets": { type: "boolean" } });
  if (values.help) return io.out(APPLY_HELP), 0;
  const file = values.file as string | undefined;
  if (!file) throw new UsageError("apply needs -f FILE, the configuration file");
  const { api, server } = apiClientOf("apply", values, io);
  let text: string;
  try {
    text = file === "-" ? await Bun.stdin.text() : readFileSync(file, "utf8");
  } catch (err) {
    io.err(`error: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    return 1;
  }
  const dryRun = values.plan === true;
  try {
    const desired = loadConfigFile(text, file, io.env);
    const current = await readAccount(api);
    const changes = planChanges(desired, current, { file, prune: values.prune === true, sendSecrets: values["send-secrets"] === true });
    if (dryRun) for (const c of changes) io.out(changeLine(c, current));
    else await applyChanges(api, changes, current, io.out);
    const count = (op: string) => changes.filter((c) => c.op === op).length;
    const verb = dryRun ? "would be " : "";
    io.out(changes.length === 0 ? "no changes" : `${count("create")} ${verb}created, ${count("update")} ${verb}updated, ${count("delete")} ${verb}deleted`);
    return 0;
  } catch (e) {
    if (e instanceof ConfigFileError) {
      io.err(`error: ${file} cannot be applied; nothing was changed:\n${e.message}`);
      return 1;
    }
    if (e instanceof ApplyError) {
      io.err(`error: ${e.message}`);
      return 1;
    }
    if (e instanceof ApiCallError) {
      io.err(`error: ${server} answered ${e.status} ${e.code}: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
