/**
 * A host the private-target guard counts as public, for tests that need one on a machine whose every
 * address is private: a network namespace of the test's own, joined to this one by a veth pair on a
 * /30 of TEST-NET-2 (198.51.100.0/24, documentation space that the guard treats as public), with
 * netns-server.ts listening inside. Needs root (CAP_NET_ADMIN); `canCreateNetns` says whether it can.
 */
import { join } from "node:path";
import { randomInt } from "node:crypto";

const run = (cmd: string[]) => Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });

export const canCreateNetns: boolean = (() => {
  const name = `vigil-probe-${process.pid}`;
  const ok = run(["ip", "netns", "add", name]).exitCode === 0;
  if (ok) run(["ip", "netns", "del", name]);
  return ok;
})();

export interface PublicHost {
  /** the server's address, as seen from this namespace */
  ip: string;
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function startPublicHost(): Promise<PublicHost> {
  const tag = `${process.pid % 10000}${randomInt(0, 1000)}`;
  const ns = `vigil-pub-${tag}`;
  const outer = `vgo${tag}`.slice(0, 15);
  const inner = `vgi${tag}`.slice(0, 15);
  const base = 4 * randomInt(0, 64);
  const ourIp = `198.51.100.${base + 1}`;
  const theirIp = `198.51.100.${base + 2}`;
  const steps = [
    ["ip", "netns", "add", ns],
    ["ip", "link", "add", outer, "type", "veth", "peer", "name", inner],
    ["ip", "link", "set", inner, "netns", ns],
    ["ip", "addr", "add", `${ourIp}/30`, "dev", outer],
    ["ip", "link", "set", outer, "up"],
    ["ip", "netns", "exec", ns, "ip", "addr", "add", `${theirIp}/30`, "dev", inner],
    ["ip", "netns", "exec", ns, "ip", "link", "set", inner, "up"],
    ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"],
  ];
  const cleanup = () => {
    run(["ip", "link", "del", outer]);
    run(["ip", "netns", "del", ns]);
  };
  for (const step of steps) {
    const r = run(step);
    if (r.exitCode !== 0) {
      cleanup();
      throw new Error(`${step.join(" ")} failed: ${r.stderr.toString()}`);
    }
  }
  const proc = Bun.spawn(["ip", "netns", "exec", ns, process.execPath, join(import.meta.dir, "netns-server.ts"), theirIp], { stdout: "pipe", stderr: "inherit" });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  const deadline = Date.now() + 10_000;
  let pending = reader.read();
  while (!/port (\d+)/.test(text)) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill("SIGKILL");
      cleanup();
      throw new Error(`the public host's server did not start: ${text}`);
    }
    const got = await Promise.race([pending, Bun.sleep(100).then(() => null)]);
    if (got === null) continue;
    if (got.done) break;
    text += new TextDecoder().decode(got.value);
    pending = reader.read();
  }
  const port = Number(/port (\d+)/.exec(text)![1]);
  return {
    ip: theirIp,
    port,
    url: `http://${theirIp}:${port}`,
    async close() {
      proc.kill("SIGTERM");
      await proc.exited;
      cleanup();
    },
  };
}
