import { join } from "node:path";
import { engineArgs } from "./engine.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const MAIN = join(ROOT, "src", "main.ts");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `vigil <args>` from source as a real child process. */
export async function runVigil(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const merged = { ...process.env, ...env };
  const proc = Bun.spawn([process.execPath, MAIN, ...args, ...(await engineArgs(args, merged))], { cwd: ROOT, env: merged, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** The last non-empty line of a command's stdout: where `token create` and `peer create` print the secret. */
export function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return lines[lines.length - 1]!.trim();
}

export interface ChildServer {
  proc: ReturnType<typeof Bun.spawn>;
  url: string;
  port: number;
  output(): string;
  /** SIGTERM and wait; returns the exit code */
  stop(): Promise<number>;
}

/**
 * Starts `vigil serve` (from source, or a given executable) as a real child process on a free
 * loopback port and waits until it answers /healthz.
 */
export async function spawnServer(
  args: string[],
  o: { exe?: string[]; cwd?: string; env?: Record<string, string>; timeoutMs?: number; port?: number; name?: string } = {},
): Promise<ChildServer> {
  const port = o.port ?? (await freePort());
  const name = o.name ?? "server";
  const env = { ...process.env, ...o.env };
  const cmd = [...(o.exe ?? [process.execPath, MAIN]), "serve", "--host", "127.0.0.1", "--port", String(port), ...args, ...(await engineArgs(args, env))];
  let out = "";
  const proc = Bun.spawn(cmd, { cwd: o.cwd ?? ROOT, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk, { stream: true });
  };
  void pump(proc.stdout as ReadableStream<Uint8Array>);
  void pump(proc.stderr as ReadableStream<Uint8Array>);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (o.timeoutMs ?? 15_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}: ${out}`);
    try {
      if ((await fetch(url + "/healthz")).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`${name} did not start in time: ${out}`);
    }
    await Bun.sleep(50);
  }
  return {
    proc,
    url,
    port,
    output: () => out,
    async stop() {
      proc.kill("SIGTERM");
      return await proc.exited;
    },
  };
}

/** A port the kernel just handed out and released; good enough for tests on loopback. */
export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}
