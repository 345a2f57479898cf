/**
 * The plan's rules on their own (docs/configuration-as-code.md "Secrets", "Matching"): which
 * secrets an update sends when the API cannot show them, and how resources without an external_id
 * are matched. The end-to-end behaviour against a server is in round-trip.test.ts.
 */
import { expect, test } from "bun:test";
import { CONFIG_KINDS, type ConfigKind } from "../../src/domain/config-file-schema.ts";
import type { CurrentState } from "../../src/config-as-code/current-state.ts";
import { loadConfigFile } from "../../src/config-as-code/load-file.ts";
import { changeLine, planChanges } from "../../src/config-as-code/plan.ts";

const OPTS = { file: "f.yaml", prune: false, sendSecrets: false };

/** An account holding these resources, keyed as readAccount keys them. */
function account(resources: Partial<Record<ConfigKind, { id: number; attributes: Record<string, unknown> }[]>>): CurrentState {
  const state = { entries: {}, keyOf: {}, unnamed: {} } as CurrentState;
  for (const kind of CONFIG_KINDS) {
    state.entries[kind] = new Map();
    state.keyOf[kind] = new Map();
    state.unnamed[kind] = [];
    for (const r of resources[kind] ?? []) {
      const key = (r.attributes.external_id as string | null) ?? `${{ groups: "group", notification_channels: "channel", monitors: "monitor", maintenance_windows: "window", status_pages: "page" }[kind]}-${r.id}`;
      state.entries[kind].set(key, { kind, key, id: r.id, attributes: r.attributes });
      state.keyOf[kind].set(r.id, key);
    }
  }
  return state;
}

const HTTP = { monitor_type: "http", method: "GET", interval_sec: 60, timeout_ms: 5000, group_id: null, is_paused: false, is_in_maintenance: true, tags: [], regions: null, notification_channel_ids: [], depends_on_ids: [], escalation_channel_ids: [], api_auth_type: "bearer" };

const monitorFile = (target: string, extra = "") =>
  `monitors:\n  site:\n    name: Site\n    monitor_type: http\n    target: ${target}\n    interval_sec: 60\n    timeout_ms: 5000\n    api_auth_type: bearer\n    api_auth_bearer_token: \${TOKEN}\n${extra}`;

test("a matched monitor that differs in nothing is not written; is_in_maintenance is not the file's", () => {
  const desired = loadConfigFile(monitorFile("https://a.example.com/health"), "f.yaml", { TOKEN: "t" });
  const current = account({ monitors: [{ id: 7, attributes: { ...HTTP, name: "Site", target: "https://a.example.com/health", external_id: "site" } }] });
  expect(planChanges(desired, current, OPTS)).toEqual([]);
});

test("an http monitor's secret goes again when its origin moves, not when the path changes", () => {
  const current = account({ monitors: [{ id: 7, attributes: { ...HTTP, name: "Site", target: "https://a.example.com/health", external_id: "site" } }] });
  const samePath = planChanges(loadConfigFile(monitorFile("https://a.example.com/ready"), "f.yaml", { TOKEN: "t" }), current, OPTS);
  expect(samePath.map((c) => changeLine(c, current))).toEqual(["~ update monitor site: target"]);
  const moved = planChanges(loadConfigFile(monitorFile("https://b.example.com/health"), "f.yaml", { TOKEN: "t" }), current, OPTS);
  expect(moved[0]!.send).toEqual({ target: "https://b.example.com/health", api_auth_bearer_token: "t" });
  const rotated = planChanges(loadConfigFile(monitorFile("https://a.example.com/health"), "f.yaml", { TOKEN: "new" }), current, { ...OPTS, sendSecrets: true });
  expect(rotated[0]!.send).toEqual({ api_auth_bearer_token: "new" });
});

test("a database monitor's password goes again when its server moves; a channel's url when the part shown differs", () => {
  const pg = { ...HTTP, monitor_type: "postgres", api_auth_type: undefined, name: "DB", target: "postgres://u@db1.internal:5432/app", external_id: "db", db_query: null, db_tls: false };
  const hook = { name: "Hook", channel_type: "webhook", is_enabled: true, default_for_new_monitors: false, url: "https://hooks.example.com/***", external_id: "hook" };
  const current = account({ monitors: [{ id: 3, attributes: pg }], notification_channels: [{ id: 4, attributes: hook }] });
  const file = (host: string, url: string) =>
    `notification_channels:\n  hook:\n    name: Hook\n    channel_type: webhook\n    url: ${url}\nmonitors:\n  db:\n    name: DB\n    monitor_type: postgres\n    target: postgres://u@${host}:5432/app\n    interval_sec: 60\n    timeout_ms: 5000\n    db_password: \${PW}\n`;
  expect(planChanges(loadConfigFile(file("db1.internal", "https://hooks.example.com/other-path"), "f.yaml", { PW: "p" }), current, OPTS)).toEqual([]);
  const moved = planChanges(loadConfigFile(file("db2.internal", "https://elsewhere.example.com/x"), "f.yaml", { PW: "p" }), current, OPTS);
  expect(moved.map((c) => [c.key, c.send])).toEqual([
    ["hook", { url: "https://elsewhere.example.com/x" }],
    ["db", { target: "postgres://u@db2.internal:5432/app", db_password: "p" }],
  ]);
});

test("a secret whose variable is not set is left as stored, and stops apply only where it must be sent", () => {
  const hook = { name: "Hook", channel_type: "webhook", is_enabled: true, default_for_new_monitors: false, url: "https://hooks.example.com/***", external_id: "hook" };
  const current = account({ monitors: [{ id: 7, attributes: { ...HTTP, name: "Site", target: "https://a.example.com/health", external_id: "site" } }], notification_channels: [{ id: 4, attributes: hook }] });
  const file = (target: string, channel = "hook") => `notification_channels:\n  ${channel}:\n    name: Hook\n    channel_type: webhook\n    url: \${HOOK_URL}\n${monitorFile(target)}`;
  const unset = (target: string, opts = OPTS, channel?: string) => {
    try {
      return planChanges(loadConfigFile(file(target, channel), "f.yaml", {}), current, opts);
    } catch (e) {
      return (e as Error).message.split("\n");
    }
  };
  expect(unset("https://a.example.com/health")).toEqual([]);
  expect(unset("https://a.example.com/health", { ...OPTS, sendSecrets: true })).toEqual([
    "f.yaml:5: notification_channels.hook.url: needs the environment variable HOOK_URL, which is not set",
    "f.yaml:14: monitors.site.api_auth_bearer_token: needs the environment variable TOKEN, which is not set",
  ]);
  // a new origin needs the bearer token again; a new channel needs its url
  expect(unset("https://b.example.com/health", OPTS, "other")).toEqual([
    "f.yaml:5: notification_channels.other.url: needs the environment variable HOOK_URL, which is not set",
    "f.yaml:14: monitors.site.api_auth_bearer_token: needs the environment variable TOKEN, which is not set",
  ]);
  // the masked URL the API shows keeps the stored one on an update, and cannot make a new channel
  const masked = (channel: string) => loadConfigFile(`notification_channels:\n  ${channel}:\n    name: Hook\n    channel_type: webhook\n    url: https://hooks.example.com/***\n`, "f.yaml", {});
  expect(planChanges(masked("hook"), current, OPTS)).toEqual([]);
  expect(() => planChanges(masked("new"), current, OPTS)).toThrow("f.yaml:5: notification_channels.new.url: is a URL as the API shows it, its path hidden");
});

test("a resource without external_id is matched by its generated key; --prune deletes what the file does not name, dependents first", () => {
  const tcp = { ...HTTP, monitor_type: "tcp", api_auth_type: undefined, target: "127.0.0.1:9" };
  const current = account({
    monitors: [
      { id: 5, attributes: { ...tcp, name: "Kept", external_id: null } },
      { id: 6, attributes: { ...tcp, name: "Parent", external_id: null } },
      { id: 8, attributes: { ...tcp, name: "Child", external_id: null, depends_on_ids: [6] } },
    ],
  });
  const desired = loadConfigFile("monitors:\n  monitor-5:\n    name: Kept\n    monitor_type: tcp\n    target: 127.0.0.1:9\n    interval_sec: 60\n    timeout_ms: 5000\n", "f.yaml", {});
  expect(planChanges(desired, current, OPTS)).toEqual([]);
  expect(planChanges(desired, current, { ...OPTS, prune: true }).map((c) => changeLine(c, current))).toEqual(["- delete monitor monitor-8 (Child)", "- delete monitor monitor-6 (Parent)"]);
});
