/** Built with `bun build --compile` by the regex-engines bench: re2-wasm (not a dependency, hence the cast). */
const { RE2 } = (await import("re2-wasm" as string)) as { RE2: new (source: string, flags: string) => RegExp };

const m = new RE2("token=(\\w+)", "u").exec("a token=abc b");
console.log(JSON.stringify({ ok: m !== null, group: m?.[1] }));
export {};
