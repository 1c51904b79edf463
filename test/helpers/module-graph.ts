import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

// What `cairn serve` loads, read from the TypeScript sources with the compiler's own parser, and
// which of those modules open network connections. Used by test/unit/outbound-calls.test.ts.

const root = resolve(import.meta.dirname, "../..");

const parsed = new Map<string, ts.SourceFile>();

/** A repository-relative .ts file, parsed once. */
export function sourceFile(file: string, text?: string): ts.SourceFile {
  if (text !== undefined) return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  let source = parsed.get(file);
  if (!source) {
    source = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    parsed.set(file, source);
  }
  return source;
}

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

const literalText = (node: ts.Node | undefined): string | undefined =>
  node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;

const isDynamicImport = (node: ts.Node): node is ts.CallExpression => ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword;

export interface ModuleEdges {
  /** Specifiers loaded when the module runs: static imports and re-exports that are not `type`-only, and literal `import()`s. */
  specifiers: string[];
  /** `import(x)` with anything but a literal: the graph cannot follow it. */
  opaqueImports: string[];
  /** Modules started as worker threads: `new URL("./x.js", import.meta.url)` in a module that uses `Worker`, `SerialWorker` or `startWorker`. */
  workers: string[];
}

/** The module's runtime imports, read from its syntax tree (so comments and strings never count). */
export function edgesOf(source: ts.SourceFile, within: ts.Node = source): ModuleEdges {
  const edges: ModuleEdges = { specifiers: [], opaqueImports: [], workers: [] };
  const urls: string[] = [];
  let startsWorkers = false;
  walk(within, (node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) edges.specifiers.push(literalText(node.moduleSpecifier) ?? "");
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) edges.specifiers.push(literalText(node.moduleSpecifier) ?? "");
    else if (isDynamicImport(node)) {
      const specifier = literalText(node.arguments[0]);
      if (specifier === undefined) edges.opaqueImports.push(node.getText(source));
      else edges.specifiers.push(specifier);
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "startWorker") {
      startsWorkers = true;
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && (node.expression.text === "srcModule" || node.expression.text === "builtModule")) {
      // A module of src/ named by its path there (src/core/paths.ts), as a specifier relative to this one.
      const path = literalText(node.arguments[0]);
      if (path !== undefined) {
        const specifier = relative(dirname(resolve(root, source.fileName)), join(root, "src", path)).split(sep).join("/");
        urls.push(specifier.startsWith(".") ? specifier : `./${specifier}`);
      }
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
      if (node.expression.text === "Worker" || node.expression.text === "SerialWorker") startsWorkers = true;
      const [first, second] = node.arguments ?? [];
      const relativeUrl = literalText(first);
      if (node.expression.text === "URL" && relativeUrl?.startsWith(".") && second?.getText(source) === "import.meta.url") urls.push(relativeUrl);
    }
  });
  // A module URL beside a Worker is a thread's entry; elsewhere (a CLI path for a child process) it is not loaded here.
  if (startsWorkers) edges.workers.push(...urls);
  return edges;
}

/** A relative specifier as the repository's .ts file, or undefined for a package or node built-in. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(root, dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), base, `${base}.ts`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile() && candidate.endsWith(".ts")) return relative(root, candidate);
  }
  return undefined;
}

/**
 * The dynamic imports in `src/cli.ts` that run for one command: those inside that command's entry
 * of the `commands` table. The other commands' modules are never loaded by it.
 */
function commandImports(command: string): string[] {
  const cli = sourceFile(join("src", "cli.ts"));
  let entry: ts.Node | undefined;
  walk(cli, (node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === "commands" && node.initializer && ts.isObjectLiteralExpression(node.initializer)) {
      entry = node.initializer.properties.find((property) => property.name !== undefined && ts.isIdentifier(property.name) && property.name.text === command);
    }
  });
  if (!entry) throw new Error(`src/cli.ts has no \`${command}\` entry in its commands table`);
  return edgesOf(cli, entry).specifiers;
}

export interface ModuleGraph {
  /** Every module of ours the command loads, with the module that first loaded it. */
  modules: Map<string, string>;
  /** npm packages and node built-ins, with a module that imports each. */
  packages: Map<string, string>;
  opaqueImports: string[];
  unresolved: string[];
}

/**
 * Every module of ours that `cairn <command>` loads into its process, worker threads included:
 * `src/cli.ts` with its static imports and the command's own dynamic imports, then each module's
 * static imports, re-exports and literal dynamic imports, transitively. Child processes (the
 * archivist that `serve` supervises) are processes of their own and are not followed.
 */
export function commandGraph(command: string): ModuleGraph {
  const graph: ModuleGraph = { modules: new Map(), packages: new Map(), opaqueImports: [], unresolved: [] };
  const cliFile = join("src", "cli.ts");
  const queue: [string, string][] = [[cliFile, "(entry)"]];
  while (queue.length > 0) {
    const [file, from] = queue.shift() as [string, string];
    if (graph.modules.has(file)) continue;
    graph.modules.set(file, from);
    const source = sourceFile(file);
    const edges = edgesOf(source);
    let specifiers = [...edges.specifiers, ...edges.workers];
    if (file === cliFile) {
      // Only the static imports of the entry, and the command's own dynamic ones.
      const statics = source.statements.filter(ts.isImportDeclaration).filter((node) => !node.importClause?.isTypeOnly).map((node) => literalText(node.moduleSpecifier) ?? "");
      specifiers = [...statics, ...commandImports(command)];
    } else graph.opaqueImports.push(...edges.opaqueImports.map((text) => `${file}: ${text}`));
    for (const specifier of specifiers) {
      const target = resolveSpecifier(file, specifier);
      if (target) queue.push([target, file]);
      else if (specifier.startsWith(".")) graph.unresolved.push(`${file}: ${specifier}`);
      else if (!graph.packages.has(specifier)) graph.packages.set(specifier, file);
    }
  }
  return graph;
}

/** Built-in modules whose named exports open connections. */
const CONNECTING_EXPORTS: Record<string, readonly string[]> = {
  http: ["request", "get"],
  https: ["request", "get"],
  http2: ["connect"],
  net: ["connect", "createConnection"],
  tls: ["connect"],
};

/** Packages whose only purpose is to make requests: importing one is the violation. */
const CLIENT_PACKAGES = ["undici", "node-fetch", "cross-fetch", "axios", "got", "ws", "eventsource", "@modelcontextprotocol/sdk/client"];

/** Globals that open connections: `fetch(…)`, `new WebSocket(…)`, `new EventSource(…)`. */
const CONNECTING_GLOBALS = new Set(["fetch", "WebSocket", "EventSource", "XMLHttpRequest"]);
const GLOBAL_OBJECTS = new Set(["globalThis", "global", "window", "self"]);

const builtin = (specifier: string): string | undefined => {
  const name = specifier.replace(/^node:/, "");
  return name in CONNECTING_EXPORTS ? name : undefined;
};

/** Whether an identifier stands for a value here, not a name being declared or a member being named. */
function isValueReference(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent) || ts.isPropertySignature(parent) || ts.isMethodSignature(parent) || ts.isGetAccessor(parent) || ts.isSetAccessor(parent)) && parent.name === node) return false;
  if ((ts.isVariableDeclaration(parent) || ts.isFunctionDeclaration(parent) || ts.isParameter(parent) || ts.isClassDeclaration(parent) || ts.isInterfaceDeclaration(parent) || ts.isTypeAliasDeclaration(parent)) && parent.name === node) return false;
  if (ts.isBindingElement(parent) && parent.propertyName === node) return false;
  if (ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent) || ts.isImportClause(parent) || ts.isNamespaceImport(parent)) return false;
  if (ts.isTypeReferenceNode(parent) || ts.isQualifiedName(parent) || ts.isTypeQueryNode(parent)) return false;
  return true;
}

/**
 * Where a module opens a network connection itself: `fetch` (or `globalThis.fetch`), `request`,
 * `get`, `connect` or `createConnection` of node's http, https, http2, net and tls (imported by
 * name, or used through the module's namespace or default export), `new WebSocket`/`EventSource`,
 * or any import of a client package such as undici. Read from the syntax tree: comments and
 * strings never count.
 */
export function connectionsIn(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const at = (node: ts.Node, what: string): void => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push(`${source.fileName}:${line + 1}: ${what}`);
  };
  // Local names bound to a connecting built-in module: `import * as http`, `import http`, `import("node:http")`.
  const namespaces = new Map<string, string>();
  const checkImport = (node: ts.Node, specifier: string | undefined): void => {
    if (specifier === undefined) return;
    if (CLIENT_PACKAGES.some((name) => specifier === name || specifier.startsWith(`${name}/`))) at(node, `imports ${specifier}`);
  };
  walk(source, (node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      const specifier = literalText(node.moduleSpecifier);
      checkImport(node, specifier);
      const module = specifier === undefined ? undefined : builtin(specifier);
      const clause = node.importClause;
      if (!module || !clause) return;
      if (clause.name) namespaces.set(clause.name.text, module);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) namespaces.set(bindings.name.text, module);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) {
          const imported = (element.propertyName ?? element.name).text;
          if (!element.isTypeOnly && CONNECTING_EXPORTS[module]?.includes(imported)) at(element, `imports ${imported} from ${specifier}`);
        }
      }
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      const specifier = literalText(node.moduleSpecifier);
      checkImport(node, specifier);
      const module = specifier === undefined ? undefined : builtin(specifier);
      if (module) at(node, `re-exports from ${specifier}`);
    } else if (isDynamicImport(node)) {
      const specifier = literalText(node.arguments[0]);
      checkImport(node, specifier);
      if (specifier !== undefined && builtin(specifier)) at(node, `imports ${specifier} at run time`);
    }
  });
  walk(source, (node) => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const module = namespaces.get(node.expression.text);
      if (module && CONNECTING_EXPORTS[module]?.includes(node.name.text)) at(node, `${node.getText(source)}`);
      if (GLOBAL_OBJECTS.has(node.expression.text) && CONNECTING_GLOBALS.has(node.name.text)) at(node, node.getText(source));
    } else if (ts.isElementAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const module = namespaces.get(node.expression.text);
      const member = literalText(node.argumentExpression);
      if (module && member !== undefined && CONNECTING_EXPORTS[module]?.includes(member)) at(node, node.getText(source));
      if (GLOBAL_OBJECTS.has(node.expression.text) && member !== undefined && CONNECTING_GLOBALS.has(member)) at(node, node.getText(source));
    } else if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer && ts.isIdentifier(node.initializer)) {
      const module = namespaces.get(node.initializer.text);
      for (const element of node.name.elements) {
        const member = (element.propertyName ?? element.name).getText(source);
        if (module && CONNECTING_EXPORTS[module]?.includes(member)) at(element, `destructures ${member} from ${node.initializer.text}`);
        if (GLOBAL_OBJECTS.has(node.initializer.text) && CONNECTING_GLOBALS.has(member)) at(element, `destructures ${member} from ${node.initializer.text}`);
      }
    } else if (ts.isIdentifier(node) && CONNECTING_GLOBALS.has(node.text) && isValueReference(node)) {
      at(node, ts.isCallExpression(node.parent) && node.parent.expression === node ? `${node.text}(…)` : ts.isNewExpression(node.parent) ? `new ${node.text}(…)` : `uses ${node.text}`);
    }
  });
  return found;
}
