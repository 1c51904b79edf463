import type { MergeOutcome } from "./json-entry.js";

/**
 * `text` with the TOML table `table` (a `[header]` line and its keys, as Cairn renders it) put in
 * place of the table of the same name and its sub-tables, or appended when there is none; every
 * other line as it was. A file that does not read as TOML, or that defines that table some other
 * way (dotted keys, an inline table, an array of tables), is refused: a header appended to it
 * would make it invalid. The check is TOML's syntax plus tables and keys defined twice, which is
 * what a line-level merge could get wrong.
 *
 * Self-contained on purpose: the onboarding script runs this function's source text with node on
 * the user's machine (see program.ts), so it may use nothing from outside its own body.
 */
export function mergeTomlTable(text: string, table: string): MergeOutcome {
  interface Statement {
    kind: "table" | "array-table" | "pair";
    /** The full path: a pair's is its table's followed by its own dotted key. */
    path: string[];
    /** From the start of its line to just after the line break that ends it. */
    start: number;
    end: number;
  }

  function scan(input: string): Statement[] {
    let pos = input.startsWith("\uFEFF") ? 1 : 0;
    const fail = (what: string, at = pos): never => {
      const before = input.slice(0, at).split("\n");
      throw new SyntaxError(`line ${before.length}, column ${(before[before.length - 1] ?? "").length + 1}: ${what}`);
    };
    const space = (): void => {
      while (input[pos] === " " || input[pos] === "\t") pos++;
    };
    const comment = (): void => {
      const end = input.indexOf("\n", pos);
      pos = end < 0 ? input.length : input[end - 1] === "\r" ? end - 1 : end;
    };
    const lineBreak = (): boolean => {
      if (input[pos] === "\n") pos++;
      else if (input.startsWith("\r\n", pos)) pos += 2;
      else return false;
      return true;
    };
    const endOfLine = (): void => {
      space();
      if (input[pos] === "#") comment();
      if (pos < input.length && !lineBreak()) fail("more on the line than one statement");
    };
    // Blank lines and comments, where arrays and inline tables allow them.
    const gap = (): void => {
      for (;;) {
        space();
        if (input[pos] === "#") comment();
        if (!lineBreak()) return;
      }
    };
    const escape = (): string => {
      const code = input[pos + 1] ?? "";
      const simple: Record<string, string> = { b: "\b", t: "\t", n: "\n", f: "\f", r: "\r", e: "\x1b", '"': '"', "\\": "\\" };
      if (code in simple) {
        pos += 2;
        return simple[code] as string;
      }
      const digits = code === "u" ? 4 : code === "U" ? 8 : code === "x" ? 2 : 0;
      const hex = input.slice(pos + 2, pos + 2 + digits);
      if (digits === 0 || !/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== digits) fail("an invalid escape in a string");
      pos += 2 + digits;
      return String.fromCodePoint(parseInt(hex, 16));
    };
    const singleLine = (quote: string): string => {
      const start = pos++;
      let value = "";
      while (input[pos] !== quote) {
        const c = input[pos];
        if (c === undefined || c === "\n" || c === "\r") return fail("an unclosed string", start);
        if (c === "\\" && quote === '"') value += escape();
        else {
          value += c;
          pos++;
        }
      }
      pos++;
      return value;
    };
    const multiLine = (quote: string): void => {
      const start = pos;
      pos += 3;
      for (;;) {
        if (pos >= input.length) fail("an unclosed string", start);
        if (input.startsWith(quote.repeat(3), pos)) {
          pos += 3;
          // Up to two quotes just before the closing three belong to the string.
          for (let extra = 0; extra < 2 && input[pos] === quote; extra++) pos++;
          return;
        }
        pos += input[pos] === "\\" && quote === '"' ? 2 : 1;
      }
    };
    const key = (): string[] => {
      const parts: string[] = [];
      for (;;) {
        space();
        const c = input[pos];
        if (c === '"' || c === "'") parts.push(singleLine(c));
        else {
          const bare = /[A-Za-z0-9_-]+/y;
          bare.lastIndex = pos;
          const match = bare.exec(input);
          if (!match) fail("expected a key");
          parts.push((match as RegExpExecArray)[0]);
          pos += (match as RegExpExecArray)[0].length;
        }
        space();
        if (input[pos] !== ".") return parts;
        pos++;
      }
    };
    const value = (): void => {
      const c = input[pos];
      if (input.startsWith('"""', pos) || input.startsWith("'''", pos)) multiLine(c as string);
      else if (c === '"' || c === "'") singleLine(c);
      else if (c === "[" || c === "{") {
        // Lenient with inline tables over several lines and with their trailing commas, as TOML 1.1 is.
        const close = c === "[" ? "]" : "}";
        pos++;
        gap();
        while (input[pos] !== close) {
          if (c === "{") {
            key();
            if (input[pos] !== "=") fail("expected '='");
            pos++;
            space();
          }
          value();
          gap();
          if (input[pos] === ",") {
            pos++;
            gap();
          } else if (input[pos] !== close) fail(`expected ',' or '${close}'`);
        }
        pos++;
      } else {
        const token = /\d{4}-\d{2}-\d{2}[Tt ]\d{2}:[0-9:.]+(?:[Zz]|[+-]\d{2}:\d{2})?|[0-9A-Za-z_+.:-]+/y;
        token.lastIndex = pos;
        const word = token.exec(input)?.[0] ?? "";
        const decimal = "[+-]?(?:0|[1-9](?:_?[0-9])*)";
        const forms = [
          "true|false",
          `${decimal}(?:\\.[0-9](?:_?[0-9])*)?(?:[eE][+-]?[0-9](?:_?[0-9])*)?`,
          "0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*|0o[0-7](?:_?[0-7])*|0b[01](?:_?[01])*",
          "[+-]?(?:inf|nan)",
          "\\d{4}-\\d{2}-\\d{2}(?:[Tt ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:[Zz]|[+-]\\d{2}:\\d{2})?)?",
          "\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?",
        ];
        if (!new RegExp(`^(?:${forms.join("|")})$`).test(word)) fail(word === "" ? "expected a value" : `${JSON.stringify(word)}, which is not a TOML value`);
        pos += word.length;
      }
    };

    const statements: Statement[] = [];
    const tables = new Set<string>();
    const pairs = new Set<string>();
    let current: string[] = [];
    let scope = "";
    while (pos < input.length) {
      const start = pos;
      space();
      if (input[pos] === "#") comment();
      if (lineBreak() || pos >= input.length) continue;
      if (input[pos] === "[") {
        const array = input[pos + 1] === "[";
        pos += array ? 2 : 1;
        current = key();
        if (input[pos] !== "]" || (array && input[pos + 1] !== "]")) fail(`expected '${array ? "]]" : "]"}'`);
        pos += array ? 2 : 1;
        const name = JSON.stringify(current);
        if (!array && tables.has(name)) fail(`[${current.join(".")}] defined twice`, start);
        if (pairs.has(name)) fail(`[${current.join(".")}] defined both as a key and as a table`, start);
        if (!array) tables.add(name);
        scope = array ? `${statements.length}:` : "";
        endOfLine();
        statements.push({ kind: array ? "array-table" : "table", path: current, start, end: pos });
      } else {
        const path = current.concat(key());
        if (input[pos] !== "=") fail("expected '='");
        pos++;
        space();
        value();
        const name = JSON.stringify(path);
        if (pairs.has(scope + name) || tables.has(name)) fail(`${path.join(".")} defined twice`, start);
        pairs.add(scope + name);
        endOfLine();
        statements.push({ kind: "pair", path, start, end: pos });
      }
    }
    return statements;
  }

  let statements: Statement[];
  let fresh: Statement[];
  try {
    fresh = scan(table);
    statements = scan(text);
  } catch (error) {
    return { refused: `is not valid TOML (${(error as Error).message})` };
  }
  const header = fresh[0];
  if (!header || header.kind !== "table") return { refused: "could not be merged into: the table to add has no header" };
  const target = header.path;
  const within = (path: string[], prefix: string[]): boolean => prefix.every((part, index) => path[index] === part);

  // Each of the file's definitions of the table: its header, through its last key (the comments
  // and blank lines after that belong to what follows).
  const regions: { start: number; end: number }[] = [];
  let inTarget = false;
  for (const statement of statements) {
    if (statement.kind !== "pair") {
      inTarget = within(statement.path, target);
      if (inTarget && statement.kind === "array-table" && statement.path.length === target.length) return { refused: `defines [[${target.join(".")}]] as an array of tables` };
      if (!inTarget && statement.kind === "array-table" && within(target, statement.path)) return { refused: `defines [[${statement.path.join(".")}]] as an array of tables` };
      if (inTarget) regions.push({ start: statement.start, end: statement.end });
    } else if (inTarget) (regions[regions.length - 1] as { end: number }).end = statement.end;
    else if (within(statement.path, target)) return { refused: `sets ${statement.path.join(".")} outside a [${target.join(".")}] table of its own` };
    else if (within(target, statement.path)) return { refused: `defines ${statement.path.join(".")} as a value, which a [${target.join(".")}] table cannot be added to` };
  }

  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  const block = table.replace(/\r?\n/g, "\n").replace(/\n*$/, "\n").split("\n").join(newline);
  let merged: string;
  const [first, ...others] = regions;
  if (first) {
    merged = text;
    for (const region of [...others].reverse()) merged = merged.slice(0, region.start) + merged.slice(region.end);
    merged = merged.slice(0, first.start) + block + merged.slice(first.end);
  } else {
    const ended = text === "" || text.endsWith("\n") ? text : text + newline;
    merged = ended === "" || ended.endsWith(newline + newline) || ended === newline ? ended + block : ended + newline + block;
  }
  try {
    scan(merged);
    return { text: merged };
  } catch (error) {
    return { refused: `could not be merged into: the result would not be valid TOML (${(error as Error).message})` };
  }
}
