/** Built with `bun build --compile` by the yaml-libs bench: the `yaml` package, parsed with positions. */
import { LineCounter, parseDocument } from "yaml";

const lineCounter = new LineCounter();
const doc = parseDocument("monitors:\n  api:\n    interval_sec: 60\n", { lineCounter });
console.log(JSON.stringify({ ok: doc.errors.length === 0, data: doc.toJS(), line: lineCounter.linePos(10).line }));
