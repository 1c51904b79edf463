import { MAX_DESCRIPTION_BYTES, MAX_SIGNATURE_CHARS } from "./units.js";

/** A header on one line: whitespace collapsed, a trailing `{`/`:` dropped, at most 300 characters. */
export function signatureOf(header: string): string {
  const line = header.replace(/\s+/g, " ").trim().replace(/\s*[{:;]$/, "").trim();
  return line.length <= MAX_SIGNATURE_CHARS ? line : `${line.slice(0, MAX_SIGNATURE_CHARS - 1)}…`;
}

const DOTTED = /^[A-Za-z_$#@][\w$#]*(?:(?:\.|::|->)[A-Za-z_$#][\w$#]*)*!?$/;

/** A callee's name on one line (`fs.readFile`, `Foo::new`), or its last identifier when it is an expression. */
export function calleeName(text: string): string | undefined {
  const compact = text.replace(/\s+/g, "");
  if (DOTTED.test(compact) && compact.length <= 80) return compact;
  return /[A-Za-z_$][\w$]*!?$/.exec(compact)?.[0];
}

function truncateBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let cut = text.slice(0, max);
  while (Buffer.byteLength(cut) > max - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}

export function listLine(label: string, names: string[], max: number): string | undefined {
  if (names.length === 0) return undefined;
  const shown = names.slice(0, max).join(", ");
  return `${label}: ${shown}${names.length > max ? `, … (${names.length - max} more)` : ""}`;
}

/** §18's description: signature, the doc's first paragraph, members, names used — never the body. */
export function describe(parts: { signature?: string | undefined; doc?: string | undefined; members?: string[] | undefined; uses?: string[] | undefined; imports?: string[] | undefined; extra?: string[] }): string {
  const lines = [
    ...(parts.signature === undefined || parts.signature === "" ? [] : [parts.signature]),
    ...(parts.doc === undefined ? [] : [parts.doc]),
    ...(parts.extra ?? []),
    listLine("members", [...new Set(parts.members ?? [])], 100),
    listLine("uses", parts.uses ?? [], 40),
    listLine("imports", parts.imports ?? [], 60),
  ].filter((line): line is string => line !== undefined);
  return truncateBytes(lines.join("\n"), MAX_DESCRIPTION_BYTES);
}
