import { issuePeerToken } from "../auth/peer-tokens.ts";
import { peerAttributes } from "../domain/peer-schema.ts";
import { findAccountByName } from "../store/accounts.ts";
import { listPeers, peerAccountNames, revokePeer } from "../store/peers.ts";
import type { Account } from "../store/tables.ts";
import { openCommandStore, parseCommand, table, UsageError, type CliIo } from "./io.ts";

export const PEER_HELP = `Usage:
  vigil peer create --region NAME (--account NAME... | --all-accounts) [--label TEXT] [--data DIR]
      on the leader's data directory: create a probe peer for a region; prints its peer token,
      alone on the last line, once. The peer runs and reports the monitors of the accounts named
      (--account, repeatable or comma-separated), or of every account with --all-accounts.
  vigil peer list [--data DIR]         list peers with region, accounts, last contact, lag and queue
  vigil peer revoke ID [--data DIR]    revoke a peer's token at once

A probe runs: vigil serve --role probe --leader URL --peer-token TOKEN --region NAME`;

export async function peerCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === "--help" || sub === "-h") return io.out(PEER_HELP), sub ? 0 : 2;
  if (sub === "create") {
    const { values } = parseCommand(rest, { region: { type: "string" }, label: { type: "string" }, account: { type: "string", multiple: true }, "all-accounts": { type: "boolean" } });
    if (values.help) return io.out(PEER_HELP), 0;
    const region = values.region as string | undefined;
    if (!region) throw new UsageError("peer create needs --region NAME");
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(region)) throw new UsageError("--region must be 1-63 letters, digits, - or _");
    const names = ((values.account as string[] | undefined) ?? []).flatMap((a) => a.split(",")).map((a) => a.trim());
    const all = values["all-accounts"] === true;
    // a peer sees its accounts' monitors with their secrets: which accounts is never left implicit
    if (all && names.length) throw new UsageError("give --account NAME or --all-accounts, not both");
    if (!all && !names.length) throw new UsageError("peer create needs --account NAME (repeatable or comma-separated) or --all-accounts");
    if (names.some((n) => n === "")) throw new UsageError("--account names an empty account");
    const store = await openCommandStore(values, io.env);
    try {
      const accounts: Account[] = [];
      for (const name of new Set(names)) {
        const account = await findAccountByName(store.db, name);
        if (!account) {
          io.err(`error: no account named "${name}" (see: vigil account list)`);
          return 1;
        }
        accounts.push(account);
      }
      const { token, row } = await issuePeerToken(store.db, { region, label: (values.label as string) ?? null, accounts: all ? "all" : accounts.map((a) => a.id), now: Date.now() });
      io.out(`created peer ${row.id} for region ${region}, ${all ? "all accounts" : `account${accounts.length > 1 ? "s" : ""} ${accounts.map((a) => a.name).join(", ")}`}; its token is shown only now:`);
      io.out(token);
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "list") {
    const { values } = parseCommand(rest, {});
    if (values.help) return io.out(PEER_HELP), 0;
    const store = await openCommandStore(values, io.env);
    try {
      const rows = await listPeers(store.db);
      const names = await peerAccountNames(store.db);
      const now = Date.now();
      table(io, ["ID", "REGION", "ACCOUNTS", "LABEL", "CONNECTED", "LAST SEEN", "LAG MS", "SKEW MS", "QUEUE", "REVOKED"], rows.map((p) => {
        const a = peerAttributes(p, now); // the same view as GET /peer/v1/peers
        const accounts = p.all_accounts ? "(all)" : (names.get(p.id)?.join(",") ?? "(none)");
        return [p.id, a.region, accounts, a.label, a.connected ? "yes" : "no", a.last_seen_at, a.last_lag_ms, a.last_skew_ms, a.queue_length, a.revoked_at];
      }));
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "revoke") {
    const { values, positionals } = parseCommand(rest, {}, 1);
    if (values.help) return io.out(PEER_HELP), 0;
    const id = Number(positionals[0]);
    if (!positionals[0] || !Number.isInteger(id) || id < 1) throw new UsageError("peer revoke needs a peer ID (see: vigil peer list)");
    const store = await openCommandStore(values, io.env);
    try {
      if (!(await revokePeer(store.db, id, Date.now()))) {
        io.err(`error: no active peer with id ${id}`);
        return 1;
      }
      io.out(`revoked peer ${id}`);
      return 0;
    } finally {
      await store.close();
    }
  }
  throw new UsageError(`unknown peer command "${sub}"`);
}
