import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { verifyPassword } from "../../src/auth/passwords.ts";
import { engineArgs, openTestStore } from "../helpers/engine.ts";
import { MAIN, ROOT, runVigil } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** `vigil <args>` with `stdin` piped in, as `printf ... | vigil user create ...` does. */
async function vigil(args: string[], stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args, ...(await engineArgs(args))], { cwd: ROOT, stdin: new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe("vigil user", () => {
  test("create reads the password from stdin, list shows users without hashes, delete removes them", async () => {
    const data = tempDir("vigil-user-");
    dirs.push(data);
    expect((await runVigil(["account", "create", "acme", "--plan", "free", "--data", data])).code).toBe(0);
    const password = "a long enough password";
    const made = await vigil(["user", "create", "alice", "--account", "acme", "--password-stdin", "--data", data], `${password}\n`);
    expect(made.code).toBe(0);
    expect(made.stdout).toContain("created user alice");
    expect(made.stdout + made.stderr).not.toContain(password);
    const store = await openTestStore(data);
    try {
      const row = await store.db.selectFrom("users").selectAll().where("username", "=", "alice").executeTakeFirstOrThrow();
      expect(row.password_hash).toStartWith("$argon2id$");
      expect(await verifyPassword(password, row.password_hash)).toBe(true);
      expect(await verifyPassword(password + "\n", row.password_hash)).toBe(false); // the newline is not part of it
    } finally {
      await store.close();
    }
    const dup = await vigil(["user", "create", "alice", "--account", "acme", "--data", data], `${password}\n`);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("username is already taken");
    const weak = await vigil(["user", "create", "bob", "--account", "acme", "--data", data], "short\n");
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain("password must be at least 10 characters");
    const noAccount = await vigil(["user", "create", "carol", "--account", "missing", "--data", data], `${password}\n`);
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('no account named "missing"');
    const list = await vigil(["user", "list", "--data", data]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/ID\s+USERNAME\s+ACCOUNT\s+CREATED/);
    expect(list.stdout).toMatch(/1\s+alice\s+acme\s+\d{4}-/);
    expect(list.stdout).not.toContain("argon2");
    expect((await vigil(["user", "delete", "nobody", "--data", data])).code).toBe(1);
    const del = await vigil(["user", "delete", "alice", "--data", data]);
    expect(del.code).toBe(0);
    expect((await vigil(["user", "list", "--data", data])).stdout).not.toContain("alice");
  });

  test("help and usage errors; no --password flag exists", async () => {
    const help = await vigil(["user", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--password-stdin");
    expect((await vigil(["--help"])).stdout).toContain("user");
    const noName = await vigil(["user", "create"]);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain("needs a USERNAME");
    const flag = await vigil(["user", "create", "x", "--password", "hunter2hunter2"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option");
  });
});
