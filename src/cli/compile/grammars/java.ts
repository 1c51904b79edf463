import type { Node } from "web-tree-sitter";
import { blockDoc, commentAbove, headerOf, nameOf, type Declaration, type Grammar, type Outline } from "../syntax.js";

const KINDS: Record<string, Declaration["kind"]> = {
  class_declaration: "class",
  record_declaration: "class",
  interface_declaration: "interface",
  annotation_type_declaration: "interface",
  enum_declaration: "type",
};

const docAbove = (node: Node): string | undefined => blockDoc(commentAbove(node, ["block_comment"]));

/** The members a type body declares: methods, constructors, fields, constants and nested types. */
function membersOf(body: Node | null): Node[] {
  const members: Node[] = [];
  for (const member of body?.namedChildren ?? []) {
    if (member === null) continue;
    if (member.type === "enum_body_declarations") members.push(...membersOf(member));
    else members.push(member);
  }
  return members;
}

function memberNames(member: Node): string[] {
  if (member.type === "field_declaration" || member.type === "constant_declaration") {
    return member.childrenForFieldName("declarator").flatMap((declarator) => nameOf(declarator) ?? []);
  }
  return member.type.endsWith("_declaration") || member.type === "enum_constant" ? [nameOf(member) ?? ""].filter((name) => name !== "") : [];
}

function typeDeclarations(node: Node): Declaration[] {
  const kind = KINDS[node.type];
  const name = nameOf(node);
  if (kind === undefined || name === undefined) return [];
  const members = membersOf(node.childForFieldName("body"));
  const methods = members
    .filter((member) => (member.type === "method_declaration" || member.type === "constructor_declaration") && kind !== "interface")
    .map((member): Declaration => ({ symbol: `${name}.${nameOf(member) ?? ""}`, kind: "method", node: member, header: headerOf(member), doc: docAbove(member) }));
  return [{ symbol: name, kind, node, header: headerOf(node), doc: docAbove(node), members: members.flatMap(memberNames) }, ...methods];
}

export const java: Grammar = {
  outline(root: Node): Outline {
    const imports: string[] = [];
    const declarations: Declaration[] = [];
    for (const node of root.namedChildren) {
      if (node === null) continue;
      if (node.type === "import_declaration") {
        const name = node.namedChildren.find((child) => child?.type === "scoped_identifier" || child?.type === "identifier")?.text;
        const wildcard = node.namedChildren.some((child) => child?.type === "asterisk");
        if (name !== undefined) imports.push(`${name}${wildcard ? ".*" : ""}`);
      } else {
        declarations.push(...typeDeclarations(node));
      }
    }
    return { imports, declarations };
  },
  callTypes: ["method_invocation", "object_creation_expression"],
  callee(call: Node): string | undefined {
    if (call.type === "object_creation_expression") return call.childForFieldName("type")?.text;
    const name = call.childForFieldName("name")?.text;
    const object = call.childForFieldName("object");
    if (name === undefined) return undefined;
    return object !== null && ["identifier", "this", "field_access"].includes(object.type) ? `${object.text}.${name}` : name;
  },
  referenceTypes: ["identifier", "type_identifier"],
};
