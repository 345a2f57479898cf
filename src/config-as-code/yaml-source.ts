import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from "yaml";

/** One problem of a configuration file: where, which field (dotted path), and what is wrong. */
export interface FileProblem {
  line: number;
  field: string;
  message: string;
}

/** A file that cannot be applied; every problem found is listed, so one run shows them all. */
export class ConfigFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: FileProblem[],
  ) {
    super(problems.map((p) => formatProblem(file, p)).join("\n"));
  }
}

export function formatProblem(file: string, p: FileProblem): string {
  return `${file}:${p.line}: ${p.field ? `${p.field}: ` : ""}${p.message}`;
}

export type YamlPath = readonly (string | number)[];

/** A parsed file and the line of any path in it. */
export interface YamlSource {
  data: unknown;
  /** the line of the deepest node of `path` the file has (the key's line for a map entry) */
  lineOf(path: YamlPath): number;
}

/**
 * Parses YAML 1.2 (core schema: `yes` stays a string) keeping node positions, so a problem found
 * later, by the schema or a rule of the API, names its line. Duplicate keys are an error.
 */
export function parseYamlSource(text: string): { source: YamlSource | null; problems: FileProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const line = (offset: number) => lineCounter.linePos(offset).line;
  if (doc.errors.length) return { source: null, problems: doc.errors.map((e) => ({ line: line(e.pos[0]), field: "", message: e.message.split("\n")[0]! })) };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { source: null, problems: [{ line: 1, field: "", message: (e as Error).message }] };
  }
  const lineOf = (path: YamlPath): number => {
    let node: unknown = doc.contents;
    let at = (node as Node | null)?.range?.[0] ?? 0;
    for (const seg of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        at = (pair.key as Node).range?.[0] ?? at;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number" && node.items[seg]) {
        node = node.items[seg];
        at = (node as Node).range?.[0] ?? at;
      } else break;
    }
    return line(at);
  };
  return { source: { data, lineOf }, problems: [] };
}
