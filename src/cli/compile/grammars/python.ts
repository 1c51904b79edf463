import type { Node } from "web-tree-sitter";
import { firstParagraph, headerOf, nameOf, stringContent, textBefore, type Declaration, type Grammar, type Outline } from "../syntax.js";

/** The first paragraph of the docstring opening `block` (a module, or a def/class body). */
function docstring(block: Node | null): string | undefined {
  const first = block?.namedChildren.find((child) => child !== null && child.type !== "comment");
  const literal = first?.type === "expression_statement" ? first.namedChild(0) : null;
  if (literal?.type !== "string") return undefined;
  return firstParagraph(stringContent(literal).split(/\r?\n/));
}

/** An assignment statement's target name and the assignment, when the target is a plain name. */
function assignment(statement: Node): { name: string; node: Node } | undefined {
  const node = statement.type === "expression_statement" ? statement.namedChild(0) : null;
  const left = node?.type === "assignment" ? node.childForFieldName("left") : null;
  return node !== null && left?.type === "identifier" ? { name: left.text, node } : undefined;
}

/** The definition inside a decorated one (or the statement itself). */
const definitionOf = (statement: Node): Node => (statement.type === "decorated_definition" ? (statement.childForFieldName("definition") ?? statement) : statement);

function classDeclarations(name: string, klass: Node, outer: Node, doc: string | undefined): Declaration[] {
  const body = klass.childForFieldName("body");
  const members: string[] = [];
  const methods: Declaration[] = [];
  for (const statement of body?.namedChildren ?? []) {
    if (statement === null) continue;
    const definition = definitionOf(statement);
    const methodName = definition.type === "function_definition" ? nameOf(definition) : undefined;
    if (methodName !== undefined) {
      members.push(methodName);
      methods.push({ symbol: `${name}.${methodName}`, kind: "method", node: statement, header: headerOf(definition), doc: docstring(definition.childForFieldName("body")) });
    } else if (definition.type === "class_definition") {
      members.push(nameOf(definition) ?? "");
    } else {
      const assigned = assignment(statement);
      if (assigned !== undefined) members.push(assigned.name);
    }
  }
  return [{ symbol: name, kind: "class", node: outer, header: headerOf(klass), doc, members: members.filter((member) => member !== "") }, ...methods];
}

export const python: Grammar = {
  outline(root: Node): Outline {
    const imports: string[] = [];
    const declarations: Declaration[] = [];
    for (const statement of root.namedChildren) {
      if (statement === null) continue;
      if (statement.type === "import_statement") {
        for (const name of statement.childrenForFieldName("name")) imports.push((name.type === "aliased_import" ? name.childForFieldName("name") : name)?.text ?? "");
        continue;
      }
      if (statement.type === "import_from_statement") {
        imports.push(statement.childForFieldName("module_name")?.text ?? "");
        continue;
      }
      if (statement.type === "future_import_statement") {
        imports.push("__future__");
        continue;
      }
      const definition = definitionOf(statement);
      const name = nameOf(definition);
      if (definition.type === "function_definition" && name !== undefined) {
        declarations.push({ symbol: name, kind: "function", node: statement, header: headerOf(definition), doc: docstring(definition.childForFieldName("body")) });
      } else if (definition.type === "class_definition" && name !== undefined) {
        declarations.push(...classDeclarations(name, definition, statement, docstring(definition.childForFieldName("body"))));
      } else if (statement.type === "type_alias_statement") {
        const alias = statement.namedChild(0)?.text;
        if (alias !== undefined) declarations.push({ symbol: alias, kind: "type", node: statement, header: `type ${alias}` });
      } else {
        const assigned = assignment(statement);
        if (assigned !== undefined) {
          const header = textBefore(assigned.node, assigned.node.childForFieldName("right")).replace(/=\s*$/, "");
          declarations.push({ symbol: assigned.name, kind: "const", node: statement, header });
        }
      }
    }
    return { imports: imports.filter((name) => name !== ""), declarations, doc: docstring(root) };
  },
  callTypes: ["call"],
  callee(call: Node): string | undefined {
    const target = call.childForFieldName("function");
    return target?.type === "identifier" || target?.type === "attribute" ? target.text : undefined;
  },
  referenceTypes: ["identifier"],
};
