import type { Node } from "web-tree-sitter";
import type { UnitKind } from "./units.js";

/** One declaration a grammar found: what becomes a symbol unit. */
export interface Declaration {
  /** The unit's symbol: `name`, or `Owner.name` for a method. */
  symbol: string;
  kind: Exclude<UnitKind, "module" | "file">;
  /** The node whose text is hashed and whose lines are the unit's (export, decorators included). */
  node: Node;
  /** The declaration's header, before whitespace is collapsed. */
  header: string;
  doc?: string | undefined;
  members?: string[];
}

/** What a grammar reads off one file. */
export interface Outline {
  imports: string[];
  declarations: Declaration[];
  /** The file's own doc (Python module docstring, Go package comment, Rust `//!`). */
  doc?: string | undefined;
}

/** The parts of a language `extract` needs: the outline, and how to read calls and references. */
export interface Grammar {
  outline(root: Node): Outline;
  /** Node types that are calls, and the name each calls (undefined when it has none worth naming). */
  callTypes: readonly string[];
  callee(call: Node): string | undefined;
  /** Node types whose text may name another top-level symbol of the file. */
  referenceTypes: readonly string[];
}

/** The text of `node` from its start to the start of `end` (or the whole node when there is no `end`). */
export function textBefore(node: Node, end: Node | null | undefined): string {
  const text = node.text;
  return end === null || end === undefined ? text : text.slice(0, end.startIndex - node.startIndex);
}

/** A declaration's header: its text up to its body field. */
export function headerOf(node: Node, bodyField = "body"): string {
  return textBefore(node, node.childForFieldName(bodyField));
}

/** The name a node's `name` field holds, or undefined. */
export function nameOf(node: Node, field = "name"): string | undefined {
  const name = node.childForFieldName(field);
  return name === null ? undefined : name.text;
}

/** The first paragraph of a doc text whose comment markers are already removed. */
export function firstParagraph(lines: string[]): string | undefined {
  const paragraph: string[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("@")) {
      if (paragraph.length > 0) break;
      continue;
    }
    paragraph.push(line);
  }
  const text = paragraph.join(" ").replace(/\s+/g, " ").trim();
  return text === "" ? undefined : text.slice(0, 1000);
}

/** The first paragraph of a `/** … *\/` comment, or undefined for any other comment. */
export function blockDoc(comment: Node | null | undefined): string | undefined {
  if (comment === null || comment === undefined) return undefined;
  const text = comment.text;
  if (!text.startsWith("/**") || text.startsWith("/**/")) return undefined;
  const body = text.slice(3, text.endsWith("*/") ? -2 : undefined);
  return firstParagraph(body.split(/\r?\n/).map((line) => line.replace(/^\s*\*(?!\/)/, "")));
}

/** The comment right before `node` (on its line or the line above), if the previous sibling is one. */
export function commentAbove(node: Node, commentTypes: readonly string[] = ["comment"]): Node | undefined {
  const previous = node.previousNamedSibling;
  if (previous === null || !commentTypes.includes(previous.type)) return undefined;
  return previous.endPosition.row >= node.startPosition.row - 1 ? previous : undefined;
}

/** The comments of the same kind stacked right above `node`, top first (Go `//`, Rust `///`). */
export function commentBlockAbove(node: Node, accepts: (comment: Node) => boolean, skips: (sibling: Node) => boolean = () => false): Node[] {
  const block: Node[] = [];
  let row = node.startPosition.row;
  for (let sibling = node.previousNamedSibling; sibling !== null; sibling = sibling.previousNamedSibling) {
    if (sibling.endPosition.row < row - 1) break;
    if (accepts(sibling)) block.unshift(sibling);
    else if (!skips(sibling)) break;
    row = sibling.startPosition.row;
  }
  return block;
}

/** The text inside a string literal's quotes (Python docstrings), undecoded. */
export function stringContent(literal: Node): string {
  return literal.text.replace(/^[rRbBuUfF]*("""|'''|"|')/, "").replace(/("""|'''|"|')$/, "");
}
