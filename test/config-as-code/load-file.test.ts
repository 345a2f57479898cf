/**
 * The file format as docs/configuration-as-code.md shows it: its full example loads (placeholders
 * read from the environment), and the JSON Schema editors check files against accepts it and refuses
 * what apply refuses for its shape. Pure: no server.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { parse } from "yaml";
import { loadConfigFile } from "../../src/config-as-code/load-file.ts";
import { ConfigFileError } from "../../src/config-as-code/yaml-source.ts";
import { configFileSchema } from "../../src/domain/config-file-schema.ts";
import { ROOT } from "../helpers/process.ts";

const DOC = readFileSync(join(ROOT, "docs", "configuration-as-code.md"), "utf8");
const EXAMPLE = /```yaml\n([\s\S]*?)```/.exec(DOC)![1]!;
const VARIABLES = [...EXAMPLE.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]!);
const ENV = Object.fromEntries(VARIABLES.map((v) => [v, v.endsWith("_URL") ? "https://hooks.example.com/services/T0/B0/x" : `secret-${v.toLowerCase()}`]));

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(JSON.stringify(configFileSchema())));

test("the documented example loads: every kind, references by key, secrets from the environment", () => {
  const state = loadConfigFile(EXAMPLE, "example.yaml", ENV);
  expect([...state.groups.keys()]).toEqual(["production"]);
  expect([...state.notification_channels.keys()]).toEqual(["ops-hook", "on-call"]);
  expect([...state.monitors.keys()]).toEqual(["database", "shop", "backup-job"]);
  expect([...state.maintenance_windows.keys()]).toEqual(["sunday-patching", "datacenter-move"]);
  expect([...state.status_pages.keys()]).toEqual(["public"]);
  expect(state.monitors.get("shop")!.attributes.api_auth_bearer_token).toBe(ENV.VIGIL_MONITOR_SHOP_API_AUTH_BEARER_TOKEN);
  expect(state.status_pages.get("public")!.attributes.monitors).toEqual(["shop", "database", "backup-job"]);
});

test("the JSON Schema accepts the documented example and refuses unknown attributes, wrong types and ids for references", () => {
  expect(validate(parse(EXAMPLE))).toBe(true);
  const bad = parse(EXAMPLE);
  bad.monitors.shop.colour = "red";
  bad.monitors.database.interval_sec = "sixty";
  bad.monitors.backup_job = { name: "x", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000, group_id: 3 };
  expect(validate(bad)).toBe(false);
  const paths = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.keyword}`);
  expect(paths).toContain("/monitors/shop additionalProperties");
  expect(paths).toContain("/monitors/database/interval_sec type");
  expect(paths).toContain("/monitors/backup_job additionalProperties");
});

test("a missing variable is named with its line and field, placeholders elsewhere too, and $${ is a literal", () => {
  const text = "monitors:\n  a:\n    name: A\n    monitor_type: http\n    target: https://${HOST}/x\n    interval_sec: 60\n    timeout_ms: 1000\n    keyword: cost $${PRICE}\n";
  try {
    loadConfigFile(text, "f.yaml", {});
    throw new Error("loaded");
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigFileError);
    expect((e as Error).message).toBe("f.yaml:5: monitors.a.target: needs the environment variable HOST, which is not set");
  }
  const state = loadConfigFile(text, "f.yaml", { HOST: "example.com" });
  expect(state.monitors.get("a")!.attributes.target).toBe("https://example.com/x");
  expect(state.monitors.get("a")!.attributes.keyword).toBe("cost ${PRICE}");
});
