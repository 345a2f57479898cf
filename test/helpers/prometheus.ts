/**
 * Prometheus text read the way Prometheus reads it: samples with their labels unescaped (\\, \" and
 * \n inside a quoted value), written independently of src/lib/prometheus-text.ts.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample line of the text; a line that does not parse throws, naming it. */
export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name) throw new Error(`not a sample: ${JSON.stringify(line)}`);
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === "{") {
      i++;
      while (line[i] !== "}") {
        const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))?.[0];
        if (!key || line.slice(i + key.length, i + key.length + 2) !== '="') throw new Error(`bad label at ${i}: ${JSON.stringify(line)}`);
        i += key.length + 2;
        let value = "";
        for (;;) {
          const c = line[i++];
          if (c === undefined) throw new Error(`unterminated label value: ${JSON.stringify(line)}`);
          if (c === '"') break;
          if (c === "\\") {
            const e = line[i++];
            if (e === "n") value += "\n";
            else if (e === "\\" || e === '"') value += e;
            else throw new Error(`bad escape \\${e}: ${JSON.stringify(line)}`);
          } else value += c;
        }
        labels[key] = value;
        if (line[i] === ",") i++;
      }
      i++;
    }
    if (line[i] !== " ") throw new Error(`no value: ${JSON.stringify(line)}`);
    out.push({ name, labels, value: Number(line.slice(i + 1)) });
  }
  return out;
}

/** The samples of one family whose labels include all of `match`. */
export function samplesOf(samples: Sample[], name: string, match: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}
