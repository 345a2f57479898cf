/**
 * Pieces of Prometheus's text exposition format (version 0.0.4) for series written by hand rather
 * than through prom-client's registry: too many to keep as registry children (README "Per-monitor
 * metrics").
 */

/**
 * A label value as the format wants it between its double quotes: backslash, double quote and line
 * feed escaped, everything else (any Unicode) left as it is, sent as UTF-8.
 *
 * @example labelValue('say "hi"\\n') // 'say \\"hi\\"\\\\n'
 */
export function labelValue(s: string): string {
  return /[\\"\n]/.test(s) ? s.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`)) : s;
}

/** The `# HELP` and `# TYPE` lines of a family, once before its samples. */
export function familyHeader(name: string, type: "gauge" | "counter", help: string): string {
  return `# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${name} ${type}\n`;
}

/**
 * `text` without the families that have no sample (a labelled counter before its first event): their
 * HELP and TYPE lines alone tell a reader nothing. Blank lines go too.
 */
export function withoutEmptyFamilies(text: string): string {
  let out = "";
  let header = "";
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("# HELP ")) header = `${line}\n`;
    else if (line.startsWith("#")) header += `${line}\n`;
    else {
      out += `${header}${line}\n`;
      header = "";
    }
  }
  return out;
}
