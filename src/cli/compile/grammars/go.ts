import type { Node } from "web-tree-sitter";
import { commentBlockAbove, firstParagraph, headerOf, nameOf, textBefore, type Declaration, type Grammar, type Outline } from "../syntax.js";

/** The first paragraph of the `//` (or `/* *\/`) comments stacked right above `node`. */
function docAbove(node: Node): string | undefined {
  const comments = commentBlockAbove(node, (sibling) => sibling.type === "comment");
  const lines = comments.flatMap((comment) => {
    const text = comment.text;
    return text.startsWith("//") ? [text.slice(2)] : text.slice(2, -2).split(/\r?\n/);
  });
  return firstParagraph(lines);
}

const unquote = (literal: Node): string => literal.text.slice(1, -1);

/** The names a struct's fields or an interface's methods declare. */
function memberNames(type: Node | null): string[] {
  const list = type?.type === "struct_type" ? type.namedChildren.find((child) => child?.type === "field_declaration_list") : type;
  return (list?.namedChildren ?? []).flatMap((member) => (member === null ? [] : member.childrenForFieldName("name").map((name) => name.text)));
}

function typeDeclarations(declaration: Node): Declaration[] {
  const specs = declaration.namedChildren.filter((child): child is Node => child?.type === "type_spec" || child?.type === "type_alias");
  return specs.flatMap((spec): Declaration[] => {
    const name = nameOf(spec);
    const type = spec.childForFieldName("type");
    if (name === undefined || type === null) return [];
    const node = specs.length === 1 ? declaration : spec;
    const doc = docAbove(node) ?? docAbove(declaration);
    if (type.type === "struct_type") return [{ symbol: name, kind: "class", node, header: `type ${textBefore(spec, type)}struct`, doc, members: memberNames(type) }];
    if (type.type === "interface_type") return [{ symbol: name, kind: "interface", node, header: `type ${textBefore(spec, type)}interface`, doc, members: memberNames(type) }];
    return [{ symbol: name, kind: "type", node, header: `type ${spec.text}`, doc }];
  });
}

function valueDeclarations(declaration: Node): Declaration[] {
  const keyword = declaration.type === "const_declaration" ? "const" : "var";
  const specs = declaration.descendantsOfType(["const_spec", "var_spec"]).filter((spec): spec is Node => spec !== null);
  return specs.flatMap((spec) => {
    const node = specs.length === 1 ? declaration : spec;
    const doc = docAbove(node) ?? docAbove(declaration);
    const header = `${keyword} ${textBefore(spec, spec.childForFieldName("value")).replace(/=\s*$/, "")}`;
    return spec.childrenForFieldName("name").map((name): Declaration => ({ symbol: name.text, kind: "const", node, header, doc }));
  });
}

/** The type a method's receiver names (`Server` for `(s *Server)`). */
function receiverType(method: Node): string {
  const receiver = method.childForFieldName("receiver");
  return receiver?.descendantsOfType("type_identifier")[0]?.text ?? "";
}

export const go: Grammar = {
  outline(root: Node): Outline {
    const imports: string[] = [];
    const declarations: Declaration[] = [];
    let doc: string | undefined;
    for (const node of root.namedChildren) {
      if (node === null) continue;
      if (node.type === "package_clause") doc = docAbove(node);
      else if (node.type === "import_declaration") {
        for (const spec of node.descendantsOfType("import_spec")) {
          const path = spec?.childForFieldName("path");
          if (path !== null && path !== undefined) imports.push(unquote(path));
        }
      } else if (node.type === "function_declaration") {
        declarations.push({ symbol: nameOf(node) ?? "", kind: "function", node, header: headerOf(node), doc: docAbove(node) });
      } else if (node.type === "method_declaration") {
        declarations.push({ symbol: `${receiverType(node)}.${nameOf(node) ?? ""}`, kind: "method", node, header: headerOf(node), doc: docAbove(node) });
      } else if (node.type === "type_declaration") {
        declarations.push(...typeDeclarations(node));
      } else if (node.type === "const_declaration" || node.type === "var_declaration") {
        declarations.push(...valueDeclarations(node));
      }
    }
    return { imports, declarations, doc };
  },
  callTypes: ["call_expression"],
  callee(call: Node): string | undefined {
    const target = call.childForFieldName("function");
    return target?.type === "identifier" || target?.type === "selector_expression" ? target.text : undefined;
  },
  referenceTypes: ["identifier", "type_identifier"],
};
