/** Built with `bun build --compile` by the regex-engines bench: re2js. */
import { RE2JS } from "re2js";

const m = RE2JS.compile("token=(\\w+)").matcher("a token=abc b");
console.log(JSON.stringify({ ok: m.find(), group: m.group(1) }));
