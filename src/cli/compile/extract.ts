import { createHash } from "node:crypto";
import type { Node } from "web-tree-sitter";
import { calleeName, describe, listLine, signatureOf } from "./describe.js";
import { go } from "./grammars/go.js";
import { java } from "./grammars/java.js";
import { ecmascript } from "./grammars/ecmascript.js";
import { python } from "./grammars/python.js";
import { rust } from "./grammars/rust.js";
import { languageOf, plainLanguageOf, type Lang } from "./languages.js";
import { parserFor } from "./parser.js";
import type { Declaration, Grammar } from "./syntax.js";
import { MAX_DEPS_PER_UNIT, MAX_FILE_BYTES, MAX_UNITS_PER_FILE, type Unit, type UnitDep } from "./units.js";

const grammars: Record<Lang, Grammar> = { typescript: ecmascript, tsx: ecmascript, javascript: ecmascript, python, go, rust, java };

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** One `file` unit: what a file without a grammar (or too big, or unparsable) becomes. */
function fileUnit(path: string, text: string, lang = languageOf(path) ?? plainLanguageOf(path)): Unit {
  const lines = lineCount(text);
  return { path, symbol: "", kind: "file", lang, start_line: 1, end_line: Math.max(1, lines), sha: sha256(text), description: `${lang} file, ${lines} lines`, deps: [] };
}

const unique = (names: Iterable<string>): string[] => [...new Set(names)];

/** Names called in `node`, in order of first call. */
function callsIn(node: Node, grammar: Grammar): string[] {
  return unique(node.descendantsOfType([...grammar.callTypes]).flatMap((call) => {
    const callee = call === null ? undefined : grammar.callee(call);
    const name = callee === undefined ? undefined : calleeName(callee);
    return name === undefined ? [] : [name];
  }));
}

/** Other top-level symbols of the file that `node` names, sorted. */
function symbolDeps(node: Node, grammar: Grammar, topLevel: Set<string>, own: string): UnitDep[] {
  const names = new Set<string>();
  for (const reference of node.descendantsOfType([...grammar.referenceTypes])) {
    const name = reference?.text;
    if (name !== undefined && name !== own && topLevel.has(name)) names.add(name);
  }
  return [...names].sort().slice(0, MAX_DEPS_PER_UNIT).map((name) => ({ kind: "symbol", name }));
}

function endLine(node: Node): number {
  const end = node.endPosition;
  return end.column === 0 && end.row > node.startPosition.row ? end.row : end.row + 1;
}

/** Symbols made unique within the file: a second `Foo.get` (overload, getter and setter) becomes `Foo.get#2`. */
function uniqueSymbols(declarations: Declaration[]): Declaration[] {
  const seen = new Map<string, number>();
  return declarations.map((declaration) => {
    const count = (seen.get(declaration.symbol) ?? 0) + 1;
    seen.set(declaration.symbol, count);
    return count === 1 ? declaration : { ...declaration, symbol: `${declaration.symbol}#${count}` };
  });
}

/**
 * The §18 units of one source file: a `module` unit and one unit per top-level declaration and
 * method, or one `file` unit when the language has no grammar, the file is over 1 MiB or does not parse.
 */
export async function extractUnits(path: string, text: string): Promise<Unit[]> {
  const lang = languageOf(path);
  if (lang === undefined || Buffer.byteLength(text) > MAX_FILE_BYTES) return [fileUnit(path, text)];
  let tree;
  try {
    tree = (await parserFor(lang)).parse(text);
  } catch {
    tree = null;
  }
  if (tree === null) return [fileUnit(path, text)];
  try {
    const grammar = grammars[lang];
    const outline = grammar.outline(tree.rootNode);
    const declarations = uniqueSymbols(outline.declarations.filter((declaration) => declaration.symbol !== "")).slice(0, MAX_UNITS_PER_FILE - 1);
    const topLevel = declarations.filter((declaration) => declaration.kind !== "method");
    const topNames = new Set(topLevel.map((declaration) => declaration.symbol));
    const imports = unique(outline.imports).sort();
    const shape = topLevel.map((declaration) => `${declaration.kind} ${declaration.symbol}`).sort();
    const module: Unit = {
      path,
      symbol: "",
      kind: "module",
      lang,
      start_line: 1,
      end_line: Math.max(1, lineCount(text)),
      sha: sha256(JSON.stringify({ imports, names: shape })),
      description: describe({
        signature: `${lang} module ${path}`,
        doc: outline.doc,
        extra: [`${lineCount(text)} lines`, listLine("defines", shape, 100) ?? "defines nothing"],
        imports,
      }),
      deps: imports.slice(0, MAX_DEPS_PER_UNIT).map((name) => ({ kind: "import", name })),
    };
    const units = declarations.map((declaration): Unit => {
      const signature = signatureOf(declaration.header);
      const own = declaration.symbol.split(".").pop()?.replace(/#\d+$/, "") ?? declaration.symbol;
      return {
        path,
        symbol: declaration.symbol,
        kind: declaration.kind,
        lang,
        start_line: declaration.node.startPosition.row + 1,
        end_line: endLine(declaration.node),
        sha: sha256(declaration.node.text),
        ...(signature === "" ? {} : { signature }),
        description: describe({ signature, doc: declaration.doc, members: declaration.members, uses: callsIn(declaration.node, grammar) }),
        deps: symbolDeps(declaration.node, grammar, topNames, own),
      };
    });
    return [module, ...units];
  } finally {
    tree.delete();
  }
}
