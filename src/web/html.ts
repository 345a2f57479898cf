/**
 * HTML built by tagged templates that escape every interpolated value, so a monitor called
 * `<script>` renders as text. Only `SafeHtml` (the result of `html` or an explicit `raw`) passes
 * through unescaped; arrays are joined.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Trusted markup (our own SVG, pre-built fragments). Never pass user input here. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** `attr` only when `on`, for boolean attributes (checked, selected, disabled). */
export function when(on: boolean, markup: string): SafeHtml {
  return new SafeHtml(on ? markup : "");
}
