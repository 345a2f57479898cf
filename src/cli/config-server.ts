import { ApiClient } from "../config-as-code/api-client.ts";
import { UsageError, type CliIo } from "./io.ts";

/** The options export and apply share: the server, and the token from --token or VIGIL_TOKEN. */
export const SERVER_OPTIONS = { server: { type: "string" }, token: { type: "string" } } as const;

export function apiClientOf(command: string, values: Record<string, unknown>, io: CliIo): { api: ApiClient; server: string } {
  const server = values.server as string | undefined;
  if (!server) throw new UsageError(`${command} needs --server URL (the Vigil instance, such as http://localhost:8080)`);
  try {
    const u = new URL(server);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    throw new UsageError(`--server must be an http(s) URL, got "${server}"`);
  }
  const token = (values.token as string | undefined) ?? io.env.VIGIL_TOKEN;
  if (!token) throw new UsageError(`${command} needs an API token: --token T or the environment variable VIGIL_TOKEN`);
  return { api: new ApiClient(server, token, (s) => io.err(`rate limited by the server: waiting ${s} s`)), server };
}
