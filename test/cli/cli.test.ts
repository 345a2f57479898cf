import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { hashToken } from "../../src/lib/tokens.ts";
import { databaseAtRest, openTestStore } from "../helpers/engine.ts";
import { lastLine, ROOT, runVigil, spawnServer } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
const fresh = () => {
  const d = tempDir("vigil-cli-");
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("help and usage errors", () => {
  test("top-level help lists every command; no command exits 2", async () => {
    const r = await runVigil(["--help"]);
    expect(r.code).toBe(0);
    for (const c of ["serve", "account", "token", "peer", "healthcheck"]) expect(r.stdout).toContain(c);
    expect((await runVigil([])).code).toBe(2);
  });

  // README "Install": the version is package.json's, the commit the checkout's (`-dirty` when tracked files changed)
  test.each([["--version"], ["-v"]])("vigil %s prints the version, the commit and the platform", async (flag) => {
    const r = await runVigil([flag]);
    expect(r.code).toBe(0);
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    const m = /^vigil (\S+) \(commit (\S+), bun (\S+), (\S+)\)$/.exec(r.stdout.trim());
    expect(m?.slice(1)).toEqual([version, expect.any(String), Bun.version, `${process.platform}-${process.arch}`]);
    const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT });
    if (head.exitCode === 0) expect(m![2]!).toMatch(new RegExp(`^${head.stdout.toString().trim()}(-dirty)?$`));
    else expect(m![2]).toBe("unknown");
  });

  test.each([["serve"], ["account"], ["token"], ["peer"], ["healthcheck"]])("vigil %s --help", async (cmd) => {
    const r = await runVigil([cmd, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage");
  });

  test.each([
    [["nonsense"], "unknown command"],
    [["account", "create"], "needs a NAME"],
    [["account", "create", "x", "--plan", "gold"], "--plan must be free, pro or enterprise"],
    [["account", "frobnicate"], "unknown account command"],
    [["token", "create", "--account", "a"], "needs --scopes"],
    [["token", "create", "--scopes", "all"], "needs --account"],
    [["token", "create", "--account", "a", "--scopes", "monitors:read,bogus:scope"], "unknown scope(s): bogus:scope"],
    [["token", "revoke", "abc"], "needs a token ID"],
    [["peer", "create"], "needs --region"],
    [["peer", "create", "--region", "bad region!"], "--region must be"],
    [["peer", "create", "--region", "eu"], "peer create needs --account NAME (repeatable or comma-separated) or --all-accounts"],
    [["peer", "create", "--region", "eu", "--account", "a", "--all-accounts"], "give --account NAME or --all-accounts, not both"],
    [["peer", "create", "--region", "eu", "--account", "a,"], "--account names an empty account"],
    [["account", "list", "--what"], "Unknown option"],
    [["account", "create", "x", "--plan", "pro", "--block-private-targets", "--allow-private-targets"], "contradict each other"],
    [["account", "update", "x"], "account update needs --plan, --max-monitors, --min-interval-sec or one of"],
    [["serve", "--port", "99999"], "--port must be an integer from 0 to 65535"],
    [["serve", "--role", "probe"], "--role probe needs --leader"],
    [["serve", "--log-level", "loud"], "--log-level must be one of"],
  ])("%p fails with exit 2 and says %p", async (args, message) => {
    const r = await runVigil(args as string[], { VIGIL_DATA: fresh() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message as string);
  });
});

describe("accounts, tokens and peers", () => {
  test("account create prints the id; list shows it; duplicates are refused with exit 1", async () => {
    const data = fresh();
    const a = await runVigil(["account", "create", "acme", "--plan", "pro", "--data", data]);
    expect(a.code).toBe(0);
    expect(lastLine(a.stdout)).toMatch(/^\d+$/);
    const dup = await runVigil(["account", "create", "acme", "--plan", "pro", "--data", data]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("already exists");
    const list = await runVigil(["account", "list"], { VIGIL_DATA: data });
    expect(list.stdout).toMatch(/acme\s+pro/);
  });

  test("token create prints the token alone on the last line, stores only its hash; list never shows it; revoke works", async () => {
    const data = fresh();
    await runVigil(["account", "create", "acme", "--plan", "enterprise", "--data", data]);
    const r = await runVigil(["token", "create", "--account", "acme", "--scopes", "monitors:read,checks:read", "--label", "ci", "--data", data]);
    expect(r.code).toBe(0);
    const token = lastLine(r.stdout);
    expect(token).toMatch(/^vgl_[A-Za-z0-9_-]{40,}$/);
    const store = await openTestStore(data);
    const rows = await store.db.selectFrom("api_tokens").selectAll().execute();
    await store.close();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(hashToken(token));
    expect(rows[0]!.scopes).toBe("monitors:read,checks:read");
    const atRest = (await databaseAtRest(data)).text;
    expect(atRest.includes(hashToken(token))).toBe(true); // the bytes searched hold the token's row
    expect(atRest.includes(token)).toBe(false);
    const list = await runVigil(["token", "list", "--data", data]);
    expect(list.stdout).toContain("ci");
    expect(list.stdout).not.toContain(token);
    expect((await runVigil(["token", "revoke", String(rows[0]!.id), "--data", data])).code).toBe(0);
    const again = await runVigil(["token", "revoke", String(rows[0]!.id), "--data", data]);
    expect(again.code).toBe(1);
  });

  test("token create for an unknown account exits 1", async () => {
    const r = await runVigil(["token", "create", "--account", "ghost", "--scopes", "all", "--data", fresh()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no account named "ghost"');
  });

  test("peer create/list/revoke", async () => {
    const data = fresh();
    const r = await runVigil(["peer", "create", "--region", "eu-west", "--all-accounts", "--data", data]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("for region eu-west, all accounts");
    const token = lastLine(r.stdout);
    expect(token).toMatch(/^vglp_/);
    const list = await runVigil(["peer", "list", "--data", data]);
    expect(list.stdout).toContain("eu-west");
    expect(list.stdout).toMatch(/ACCOUNTS.*CONNECTED.*SKEW MS/);
    expect(list.stdout).toMatch(/eu-west\s+\(all\)\s+-\s+no/); // every account; never seen: not connected
    expect(list.stdout).not.toContain(token);
    expect((await runVigil(["peer", "revoke", "1", "--data", data])).code).toBe(0);
    expect((await runVigil(["peer", "revoke", "1", "--data", data])).code).toBe(1);
  });

  test("peer create --account: repeatable or comma-separated; an unknown account exits 1; list shows the accounts", async () => {
    const data = fresh();
    for (const name of ["acme", "globex", "initech"]) expect((await runVigil(["account", "create", name, "--plan", "pro", "--data", data])).code).toBe(0);
    const one = await runVigil(["peer", "create", "--region", "us", "--account", "globex", "--account", "acme", "--data", data]);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain("for region us, accounts globex, acme");
    expect(lastLine(one.stdout)).toMatch(/^vglp_/);
    expect((await runVigil(["peer", "create", "--region", "ap", "--account", "initech,acme", "--data", data])).code).toBe(0);
    const ghost = await runVigil(["peer", "create", "--region", "sa", "--account", "acme,ghost", "--data", data]);
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toContain('no account named "ghost"');
    expect(ghost.stdout).not.toMatch(/vglp_/);
    const list = (await runVigil(["peer", "list", "--data", data])).stdout;
    expect(list).toMatch(/^1\s+us\s+acme,globex\s/m);
    expect(list).toMatch(/^2\s+ap\s+acme,initech\s/m);
    expect(list).not.toMatch(/\ssa\s/);
  }, 30_000);
});

describe("serve", () => {
  test("first start: bootstrap token file 0600, path logged, token never logged; a CLI token works at once; SIGTERM exits 0", async () => {
    const data = fresh();
    const server = await spawnServer(["--data", data]);
    try {
      const file = join(data, "bootstrap-token");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(data, "secret.key")).mode & 0o777).toBe(0o600);
      const boot = readFileSync(file, "utf8").trim();
      expect(server.output()).toContain(file);
      expect(server.output()).not.toContain(boot);
      const withBoot = await fetch(server.url + "/api/v1/nothing", { headers: { authorization: `Bearer ${boot}` } });
      expect(withBoot.status).toBe(404); // authenticated; the path is unknown

      // a token made by the CLI on the same data directory while the server runs works at once
      await runVigil(["account", "create", "team", "--plan", "pro", "--data", data]);
      const t = lastLine((await runVigil(["token", "create", "--account", "team", "--scopes", "all", "--data", data])).stdout);
      const res = await fetch(server.url + "/api/v1/nothing", { headers: { authorization: `Bearer ${t}` } });
      expect(res.status).toBe(404);
      expect(res.headers.get("x-ratelimit-limit")).toBe("120");
    } finally {
      const code = await server.stop();
      expect(code).toBe(0);
    }
    expect(server.output()).toContain('"msg":"stopped"');
    // a second start keeps the account and does not rewrite the token
    const before = readFileSync(join(data, "bootstrap-token"), "utf8");
    const again = await spawnServer(["--data", data]);
    await again.stop();
    expect(readFileSync(join(data, "bootstrap-token"), "utf8")).toBe(before);
    expect(again.output()).not.toContain("first start");
  });

  test("env configures serve and flags win over env", async () => {
    const data = fresh();
    const server = await spawnServer([], { env: { VIGIL_DATA: data, VIGIL_REGION: "from-env", VIGIL_LOG_LEVEL: "info" } });
    await server.stop();
    expect(server.output()).toContain('"region":"from-env"');
    const server2 = await spawnServer(["--region", "from-flag"], { env: { VIGIL_DATA: data, VIGIL_REGION: "from-env" } });
    await server2.stop();
    expect(server2.output()).toContain('"region":"from-flag"');
  });
});
