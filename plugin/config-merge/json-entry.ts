/** What a host's reader accepts beyond plain JSON. */
export interface JsonDialect {
  comments: boolean;
  trailingCommas: boolean;
}

/** The merged file, or why the file was left alone (a phrase that follows its path). */
export type MergeOutcome = { text: string } | { refused: string };

/**
 * `text` with `entry` as the member `name` of the top-level object `container` (added, or put in
 * place of the one there), every other byte as it was: comments, order, spacing and numbers are
 * never re-serialised. The new text is read back and compared with the old one, member by member,
 * before it is returned, so a mistake here refuses instead of writing.
 *
 * Self-contained on purpose: the onboarding script runs this function's source text with node on
 * the user's machine (see program.ts), so it may use nothing from outside its own body.
 */
export function mergeJsonEntry(text: string, container: string, name: string, entry: unknown, dialect: JsonDialect): MergeOutcome {
  interface Span {
    start: number;
    end: number;
  }
  interface Member {
    key: string;
    keyStart: number;
    value: JsonNode;
    /** Just after the comma that follows the value, when one does. */
    commaEnd: number | null;
  }
  type JsonNode = (Span & { kind: "object"; members: Member[] }) | (Span & { kind: "array"; items: JsonNode[] }) | (Span & { kind: "scalar" });
  type Canonical = string | { a: Canonical[] } | { o: [string, Canonical][] };

  function parse(input: string): JsonNode {
    let pos = input.startsWith("\uFEFF") ? 1 : 0;
    const fail = (what: string, at = pos): never => {
      const before = input.slice(0, at).split("\n");
      throw new SyntaxError(`line ${before.length}, column ${(before[before.length - 1] ?? "").length + 1}: ${what}`);
    };
    const skip = (): void => {
      for (;;) {
        const c = input[pos];
        if (c === " " || c === "\t" || c === "\n" || c === "\r") pos++;
        else if (c === "/" && (input[pos + 1] === "/" || input[pos + 1] === "*")) {
          if (!dialect.comments) fail("a comment, which this host does not read");
          const end = input[pos + 1] === "/" ? input.indexOf("\n", pos) : input.indexOf("*/", pos + 2);
          if (end < 0 && input[pos + 1] === "*") fail("an unclosed comment");
          pos = end < 0 ? input.length : input[pos + 1] === "*" ? end + 2 : end;
        } else return;
      }
    };
    const string = (): string => {
      const start = pos++;
      while (input[pos] !== '"') {
        if (pos >= input.length) fail("an unclosed string", start);
        pos += input[pos] === "\\" ? 2 : 1;
      }
      pos++;
      try {
        return JSON.parse(input.slice(start, pos)) as string;
      } catch {
        return fail("an invalid string", start);
      }
    };
    const value = (): JsonNode => {
      skip();
      const start = pos;
      const open = input[pos];
      if (open === "{" || open === "[") {
        const close = open === "{" ? "}" : "]";
        const members: Member[] = [];
        const items: JsonNode[] = [];
        pos++;
        skip();
        let first = true;
        while (input[pos] !== close) {
          if (!first) {
            if (input[pos] !== ",") fail(`expected ',' or '${close}'`);
            pos++;
            const last = open === "{" ? members[members.length - 1] : undefined;
            if (last) last.commaEnd = pos;
            skip();
            if (input[pos] === close) {
              if (!dialect.trailingCommas) fail(`a comma before '${close}'`);
              break;
            }
          }
          first = false;
          if (open === "{") {
            if (input[pos] !== '"') fail("expected a key in quotes");
            const keyStart = pos;
            const key = string();
            skip();
            if (input[pos] !== ":") fail("expected ':'");
            pos++;
            members.push({ key, keyStart, value: value(), commaEnd: null });
          } else items.push(value());
          skip();
        }
        pos++;
        return open === "{" ? { kind: "object", start, end: pos, members } : { kind: "array", start, end: pos, items };
      }
      if (open === '"') string();
      else {
        const scalar = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
        scalar.lastIndex = pos;
        const match = scalar.exec(input);
        if (!match) fail(pos >= input.length ? "the end of the file where a value belongs" : "an unexpected character");
        pos += (match as RegExpExecArray)[0].length;
      }
      return { kind: "scalar", start, end: pos };
    };
    const root = value();
    skip();
    if (pos < input.length) fail("more text after the end of the document");
    return root;
  }

  const canonical = (input: string, node: JsonNode): Canonical =>
    node.kind === "object"
      ? { o: node.members.map((member): [string, Canonical] => [member.key, canonical(input, member.value)]) }
      : node.kind === "array"
        ? { a: node.items.map((item) => canonical(input, item)) }
        : input.slice(node.start, node.end);
  const canonicalOf = (value: unknown): Canonical =>
    Array.isArray(value)
      ? { a: value.map(canonicalOf) }
      : value !== null && typeof value === "object"
        ? { o: Object.entries(value).map(([key, each]): [string, Canonical] => [key, canonicalOf(each)]) }
        : JSON.stringify(value);

  let root: JsonNode;
  try {
    root = parse(text);
  } catch (error) {
    return { refused: `is not valid ${dialect.comments ? "JSON with comments" : "JSON"} (${(error as Error).message})` };
  }
  if (root.kind !== "object") return { refused: "does not hold a JSON object at its top level" };
  const found = root.members.filter((member) => member.key === container);
  if (found.length > 1) return { refused: `holds "${container}" twice` };
  const holder = found[0]?.value;
  if (holder && holder.kind !== "object") return { refused: `holds a "${container}" that is not an object` };
  const present = holder?.kind === "object" ? holder.members.filter((member) => member.key === name) : [];
  if (present.length > 1) return { refused: `holds "${name}" twice in "${container}"` };

  // The file's own ways: its line ending, and the indentation of its first indented key.
  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  const unit = /^([ \t]+)"/m.exec(text)?.[1] ?? "  ";
  const lineStart = (at: number): number => text.lastIndexOf("\n", at - 1) + 1;
  const indentAt = (at: number): string => /^[ \t]*/.exec(text.slice(lineStart(at)))?.[0] ?? "";
  const startsLine = (at: number): boolean => text.slice(lineStart(at), at).trim() === "";
  const render = (value: unknown, indent: string): string => JSON.stringify(value, null, unit).split("\n").join(newline + indent);

  const edits: { at: number; remove: number; text: string }[] = [];
  const insertMember = (object: Span & { members: Member[] }, key: string, value: unknown): void => {
    const last = object.members[object.members.length - 1];
    const indent = last && startsLine(last.keyStart) ? indentAt(last.keyStart) : indentAt(object.start) + unit;
    const member = `${JSON.stringify(key)}: ${render(value, indent)}`;
    if (!last) {
      const inside = text.slice(object.start + 1, object.end - 1);
      if (inside.trim() === "") edits.push({ at: object.start + 1, remove: inside.length, text: newline + indent + member + newline + indentAt(object.start) });
      else edits.push({ at: object.start + 1, remove: 0, text: newline + indent + member });
      return;
    }
    let at = last.commaEnd ?? last.value.end;
    // A `//` comment after the last member belongs to that member's line: the new one goes below it.
    const rest = /^[ \t]*\/\/[^\n]*/.exec(text.slice(at));
    if (rest) at += rest[0].endsWith("\r") ? rest[0].length - 1 : rest[0].length;
    if (last.commaEnd === null) edits.push({ at: last.value.end, remove: 0, text: "," });
    // A file that ends its members with a comma keeps doing so.
    edits.push({ at, remove: 0, text: newline + indent + member + (last.commaEnd === null ? "" : ",") });
  };

  const existing = present[0];
  if (existing) edits.push({ at: existing.value.start, remove: existing.value.end - existing.value.start, text: render(entry, indentAt(existing.keyStart)) });
  else if (holder?.kind === "object") insertMember(holder, name, entry);
  else insertMember(root, container, { [name]: entry });

  let merged = text;
  for (const edit of [...edits].reverse()) merged = merged.slice(0, edit.at) + edit.text + merged.slice(edit.at + edit.remove);

  const expected = canonical(text, root) as { o: [string, Canonical][] };
  const expectedHolder = expected.o.find(([key]) => key === container);
  if (!expectedHolder) expected.o.push([container, { o: [[name, canonicalOf(entry)]] }]);
  else {
    const members = (expectedHolder[1] as { o: [string, Canonical][] }).o;
    const member = members.find(([key]) => key === name);
    if (member) member[1] = canonicalOf(entry);
    else members.push([name, canonicalOf(entry)]);
  }
  try {
    if (JSON.stringify(canonical(merged, parse(merged))) === JSON.stringify(expected)) return { text: merged };
  } catch {
    // Falls through to the refusal: the merge produced something that does not read back.
  }
  return { refused: "could not be merged into without changing something else" };
}
