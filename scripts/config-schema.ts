#!/usr/bin/env bun
/**
 * Prints the configuration files' JSON Schema as the server serves it at /api/v1/config-schema.json:
 *   bun scripts/config-schema.ts > docs/config-schema.json
 * test/config-as-code/bad-files.test.ts checks that the copy in docs/ is current.
 */
import { configSchemaJson } from "../src/domain/config-file-schema.ts";

process.stdout.write(configSchemaJson());
