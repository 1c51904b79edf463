import type { Node } from "web-tree-sitter";
import { blockDoc, commentBlockAbove, firstParagraph, headerOf, nameOf, textBefore, type Declaration, type Grammar, type Outline } from "../syntax.js";

const isOuterDoc = (comment: Node): boolean => comment.type === "line_comment" && /^\/\/\/(?!\/)/.test(comment.text);

/** The first paragraph of the `///` lines (or `/** *\/` block) above `node`, attributes skipped. */
function docAbove(node: Node): string | undefined {
  const comments = commentBlockAbove(node, (sibling) => isOuterDoc(sibling) || (sibling.type === "block_comment" && sibling.text.startsWith("/**")), (sibling) => sibling.type === "attribute_item");
  if (comments.length === 1 && comments[0]?.type === "block_comment") return blockDoc(comments[0]);
  return firstParagraph(comments.filter(isOuterDoc).map((comment) => comment.text.slice(3)));
}

/** The crate's `//!` doc at the top of the file. */
function innerDoc(root: Node): string | undefined {
  const lines: string[] = [];
  for (const node of root.namedChildren) {
    if (node?.type !== "line_comment" || !node.text.startsWith("//!")) break;
    lines.push(node.text.slice(3));
  }
  return firstParagraph(lines);
}

/** Names declared in a struct's fields, an enum's variants or a trait's items. */
function memberNames(body: Node | null): string[] {
  return (body?.namedChildren ?? []).flatMap((member) => {
    const name = member === null ? undefined : nameOf(member);
    return name === undefined ? [] : [name];
  });
}

/** The type an `impl` block is for (`Foo` for `impl<T> Display for Foo<T>`). */
function implType(impl: Node): string {
  const type = impl.childForFieldName("type");
  if (type === null) return "";
  return (type.type === "generic_type" ? type.childForFieldName("type") : type)?.text ?? type.text;
}

const KINDS: Record<string, Declaration["kind"]> = {
  function_item: "function",
  function_signature_item: "function",
  struct_item: "class",
  union_item: "type",
  enum_item: "type",
  trait_item: "interface",
  type_item: "type",
  const_item: "const",
  static_item: "const",
};

export const rust: Grammar = {
  outline(root: Node): Outline {
    const imports: string[] = [];
    const declarations: Declaration[] = [];
    for (const node of root.namedChildren) {
      if (node === null) continue;
      if (node.type === "use_declaration") {
        const argument = node.childForFieldName("argument");
        if (argument !== null) imports.push(argument.text.replace(/\s+/g, " "));
        continue;
      }
      if (node.type === "extern_crate_declaration") {
        imports.push(nameOf(node) ?? "");
        continue;
      }
      if (node.type === "impl_item") {
        const owner = implType(node);
        for (const item of node.childForFieldName("body")?.namedChildren ?? []) {
          if (item?.type === "function_item") declarations.push({ symbol: `${owner}.${nameOf(item) ?? ""}`, kind: "method", node: item, header: headerOf(item), doc: docAbove(item) });
        }
        continue;
      }
      const kind = KINDS[node.type];
      const name = nameOf(node);
      if (kind === undefined || name === undefined) continue;
      let header = headerOf(node);
      if (node.type === "type_item") header = headerOf(node, "type").replace(/=\s*$/, "");
      if (kind === "const") header = textBefore(node, node.childForFieldName("value")).replace(/=\s*$/, "");
      const members = node.type === "struct_item" || node.type === "enum_item" || node.type === "trait_item" || node.type === "union_item" ? { members: memberNames(node.childForFieldName("body")) } : {};
      declarations.push({ symbol: name, kind, node, header, doc: docAbove(node), ...members });
    }
    return { imports: imports.filter((name) => name !== ""), declarations, doc: innerDoc(root) };
  },
  callTypes: ["call_expression", "macro_invocation"],
  callee(call: Node): string | undefined {
    if (call.type === "macro_invocation") {
      const macro = call.childForFieldName("macro");
      return macro === null ? undefined : `${macro.text}!`;
    }
    const target = call.childForFieldName("function");
    if (target === null) return undefined;
    if (target.type === "generic_function") return target.childForFieldName("function")?.text;
    return ["identifier", "scoped_identifier", "field_expression"].includes(target.type) ? target.text : undefined;
  },
  referenceTypes: ["identifier", "type_identifier"],
};
