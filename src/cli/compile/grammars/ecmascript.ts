import type { Node } from "web-tree-sitter";
import { blockDoc, commentAbove, headerOf, nameOf, textBefore, type Declaration, type Grammar, type Outline } from "../syntax.js";

/** TypeScript, TSX and JavaScript: their grammars share these node types. */

const FUNCTIONS = new Set(["function_declaration", "generator_function_declaration", "function_signature"]);
const CLASSES = new Set(["class_declaration", "abstract_class_declaration", "class"]);
const FUNCTION_VALUES = new Set(["arrow_function", "function_expression", "function", "generator_function"]);

function unquote(literal: Node): string {
  return literal.text.slice(1, -1);
}

/** `require("x")` as a declarator's value, or undefined. */
function requiredModule(value: Node | null): string | undefined {
  if (value?.type !== "call_expression" || value.childForFieldName("function")?.text !== "require") return undefined;
  const argument = value.childForFieldName("arguments")?.namedChildren[0];
  return argument?.type === "string" ? unquote(argument) : undefined;
}

function classMembers(body: Node | null): { name: string; node: Node; method: boolean }[] {
  const members: { name: string; node: Node; method: boolean }[] = [];
  for (const member of body?.namedChildren ?? []) {
    if (member === null) continue;
    const method = member.type === "method_definition" || member.type === "method_signature" || member.type === "abstract_method_signature";
    const name = nameOf(member) ?? nameOf(member, "property");
    if (name !== undefined && (method || /field_definition|property_signature|index_signature/.test(member.type))) members.push({ name, node: member, method });
  }
  return members;
}

function declarationsOf(statement: Node, outer: Node, doc: string | undefined): Declaration[] {
  const node = statement.type === "ambient_declaration" ? (statement.namedChildren.find((child) => child !== null && child.type !== "comment") ?? statement) : statement;
  const prefix = textBefore(outer, statement) + (node === statement ? "" : textBefore(statement, node));
  const header = (own: string): string => prefix + own;
  if (FUNCTIONS.has(node.type)) {
    const name = nameOf(node) ?? "default";
    return [{ symbol: name, kind: "function", node: outer, header: header(headerOf(node)), doc }];
  }
  if (CLASSES.has(node.type)) {
    const name = nameOf(node) ?? "default";
    const members = classMembers(node.childForFieldName("body"));
    const methods: Declaration[] = members
      .filter((member) => member.method)
      .map((member) => ({ symbol: `${name}.${member.name}`, kind: "method", node: member.node, header: headerOf(member.node), doc: blockDoc(commentAbove(member.node)) }));
    return [{ symbol: name, kind: "class", node: outer, header: header(headerOf(node)), doc, members: members.map((member) => member.name) }, ...methods];
  }
  if (node.type === "interface_declaration") {
    const name = nameOf(node) ?? "";
    const members = classMembers(node.childForFieldName("body")).map((member) => member.name);
    return [{ symbol: name, kind: "interface", node: outer, header: header(headerOf(node)), doc, members }];
  }
  if (node.type === "type_alias_declaration" || node.type === "enum_declaration") {
    const name = nameOf(node) ?? "";
    const own = node.type === "enum_declaration" ? headerOf(node) : headerOf(node, "value").replace(/=\s*$/, "");
    return [{ symbol: name, kind: "type", node: outer, header: header(own), doc }];
  }
  if (node.type === "lexical_declaration" || node.type === "variable_declaration") {
    const keyword = node.child(0)?.text ?? "const";
    return node.namedChildren
      .filter((declarator): declarator is Node => declarator?.type === "variable_declarator" && declarator.childForFieldName("name")?.type === "identifier")
      .map((declarator) => {
        const value = declarator.childForFieldName("value");
        const own = value !== null && FUNCTION_VALUES.has(value.type) ? textBefore(declarator, value) + headerOf(value) : textBefore(declarator, value).replace(/=\s*$/, "");
        return { symbol: nameOf(declarator) ?? "", kind: "const" as const, node: outer, header: header(`${keyword} ${own}`), doc };
      });
  }
  return [];
}

export const ecmascript: Grammar = {
  outline(root: Node): Outline {
    const imports: string[] = [];
    const declarations: Declaration[] = [];
    for (const statement of root.namedChildren) {
      if (statement === null) continue;
      const source = statement.childForFieldName("source");
      if ((statement.type === "import_statement" || statement.type === "export_statement") && source !== null) {
        imports.push(unquote(source));
        continue;
      }
      const inner = statement.type === "export_statement" ? (statement.childForFieldName("declaration") ?? statement.childForFieldName("value")) : statement;
      if (inner === null) continue;
      if (inner.type === "lexical_declaration" || inner.type === "variable_declaration") {
        for (const declarator of inner.namedChildren) {
          const required = declarator?.type === "variable_declarator" ? requiredModule(declarator.childForFieldName("value")) : undefined;
          if (required !== undefined) imports.push(required);
        }
      }
      declarations.push(...declarationsOf(inner, statement, blockDoc(commentAbove(statement))));
    }
    return { imports, declarations };
  },
  callTypes: ["call_expression", "new_expression"],
  callee(call: Node): string | undefined {
    const target = call.childForFieldName("function") ?? call.childForFieldName("constructor");
    if (target === null) return undefined;
    if (target.type === "identifier" || target.type === "member_expression") return target.text;
    return undefined;
  },
  referenceTypes: ["identifier", "type_identifier", "shorthand_property_identifier"],
};
