/**
 * API tokens and peer tokens are stored only as SHA-256 hashes (docs/api-rules.md "API tokens",
 * README "Security"): tokens made by the CLI against a running server and the bootstrap token are
 * used, then the raw database, WAL and shared-memory files are searched for their plaintext, while
 * the server runs and after it stopped. Finding each token's hash proves the right bytes were read.
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { hashToken } from "../../src/lib/tokens.ts";
import { databaseAtRest } from "../helpers/engine.ts";
import { lastLine, runVigil } from "../helpers/process.ts";
import { startTestServer } from "../helpers/server.ts";

test("no API or peer token is in the database files in plaintext, only its hash", async () => {
  const s = await startTestServer([], { keepData: true });
  try {
    const made = await runVigil(["token", "create", "--data", s.dataDir, "--account", "default", "--scopes", "all", "--label", "ci"]);
    expect(made.code).toBe(0);
    const apiToken = lastLine(made.stdout);
    const peer = await runVigil(["peer", "create", "--data", s.dataDir, "--region", "eu", "--all-accounts"]);
    expect(peer.code).toBe(0);
    const peerToken = lastLine(peer.stdout);
    expect(apiToken).toMatch(/^vgl_/);
    expect(peerToken).toMatch(/^vglp_/);

    // every token is used, so whatever the server writes on use (last_used_at, last_seen_at) is written
    expect((await s.api("GET", "/api/v1/monitors", undefined, { token: apiToken })).status).toBe(200);
    expect((await s.api("GET", "/api/v1/monitors")).status).toBe(200);
    expect((await fetch(`${s.url}/peer/v1/hello`, { headers: { authorization: `Bearer ${peerToken}` } })).status).toBe(200);
    await s.ctx.writes.flush();

    const tokens = { api: apiToken, bootstrap: s.token, peer: peerToken };
    const check = async () => {
      const { text } = await databaseAtRest(s.dataDir);
      for (const [kind, token] of Object.entries(tokens)) {
        const secretPart = token.replace(/^vglp?_/, "");
        expect({ kind, plaintext: text.includes(secretPart) }).toEqual({ kind, plaintext: false });
        expect({ kind, hashed: text.includes(hashToken(token)) }).toEqual({ kind, hashed: true });
      }
    };
    await check(); // while serving: on SQLite the recent writes are in the WAL
    await s.stop();
    await check(); // after the checkpoint at close
  } finally {
    await s.stop();
    rmSync(s.dataDir, { recursive: true, force: true });
  }
});
