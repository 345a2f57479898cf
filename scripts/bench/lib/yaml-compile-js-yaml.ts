/** Built with `bun build --compile` by the yaml-libs bench: js-yaml (untyped, hence the cast). */
const { load } = (await import("js-yaml" as string)) as { load(text: string): unknown };

console.log(JSON.stringify({ ok: true, data: load("monitors:\n  api:\n    interval_sec: 60\n") }));
export {};
