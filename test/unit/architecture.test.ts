import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { errorCodes, errorStatus } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/log.js";
import { createHttpApp } from "../../src/http/app.js";
import { catalogue } from "../../tools/catalogue.js";
import { openGateway } from "../../src/app.js";
import type { OperationGateway } from "../../tools/gateway.js";
import { tempDir, testEnv } from "../helpers/server.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function sourceFiles(folder: string): string[] {
  const entries = readdirSync(join(root, folder), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

// `import x from "…"`, `import type {…} from "…"`, `import "…"`, `export * from "…"`, `export {…} from "…"`,
// spread over several lines or not; the clause holds only names, braces, commas and `*`, so an
// `export const x = f("… from '…'")` never matches.
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[\w$*{},\s]+?\s+from\s*)?["']([^"']+)["']/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

function importsOf(file: string, options: { runtimeOnly?: boolean } = {}): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const statics = [...text.matchAll(STATIC_IMPORT)].filter((match) => !(options.runtimeOnly && /^\s*(?:import|export)\s+type\b/.test(match[0])));
  return [...statics, ...text.matchAll(DYNAMIC_IMPORT)].map((match) => match[1] as string);
}

type Layer = "wire" | "core" | "net" | "store" | "embed" | "events" | "services" | "tools" | "client" | "http" | "openapi" | "cli" | "mcp" | "app" | "archivist" | "plugin";

const ADAPTERS: Layer[] = ["http", "openapi", "cli", "mcp"];

/** DESIGN §1: what each layer may import of ours (besides itself). */
const allowed: Record<Layer, Layer[]> = {
  // The wire records: what clients see, declared once, for the server, the archivist and the UI.
  wire: [],
  core: ["wire"],
  // The one outbound fetcher (DESIGN §4a): what calls out to the network uses it.
  net: ["core"],
  store: ["core", "wire"],
  embed: ["core", "net"],
  events: ["store", "core", "wire"],
  services: ["store", "embed", "events", "net", "core", "wire"],
  // plugin/ holds pure renderers (data in, config text out), which the plugin operation calls.
  tools: ["services", "core", "plugin", "wire"],
  // The typed client: the catalogue's types (below, `typesOnly`), its routes from a generated table.
  client: ["core", "wire"],
  http: ["tools", "core", "wire", ...ADAPTERS],
  openapi: ["tools", "core", "wire", ...ADAPTERS],
  // The CLI is the entry point: it starts Cairn through the composition root.
  cli: ["app", "tools", "core", "wire", "archivist", "client", ...ADAPTERS],
  mcp: ["tools", "core", "wire", ...ADAPTERS],
  // The composition root builds the services and hands the transports their gateway.
  app: ["services", "store", "tools", "core", "http"],
  archivist: ["core", "wire", "client"],
  plugin: ["core", "wire"],
};

/** Layers a layer may read types from (`import type`, erased) though it may not load them. */
const typesOnly: Partial<Record<Layer, Layer[]>> = { client: ["tools"] };

/**
 * Like Playwright's DEPS.list: the npm packages each layer may use (node: built-ins are free).
 * A new dependency of a layer is a decision, made here where a reviewer sees it.
 */
const packages: Record<Layer, string[]> = {
  wire: ["zod"],
  core: ["zod"],
  net: ["ipaddr.js"],
  // hnswlib-node: the HNSW index beside a large SQLite store (src/store/sqlite/ann.ts).
  store: ["better-sqlite3", "sqlite-vec", "pg", "hnswlib-node"],
  embed: ["onnxruntime-node", "onnxruntime-common", "@anush008/tokenizers", "tar"],
  events: [],
  // ajv checks blueprint output contracts (CONTRACT §17); re2js runs the secret rules of capture
  // redaction in linear time (§13); feedsmith parses subscribed feeds and htmlparser2 turns their
  // HTML into plain text (§15); bonjour-service advertises and browses the mesh on the local
  // network when MESH_MDNS is on (§16).
  services: ["zod", "ipaddr.js", "ajv", "re2js", "feedsmith", "htmlparser2", "bonjour-service"],
  tools: ["zod"],
  // zod for its types only: the client reads the catalogue's schemas as types.
  client: ["zod"],
  http: ["express", "ipaddr.js", "prom-client", "zod"],
  openapi: ["zod"],
  // tree-sitter and its grammars are loaded only by `cairn compile` (DESIGN §4a); `ignore` matches
  // its .gitignore-syntax exclusion rules.
  cli: ["web-tree-sitter", "@vscode/tree-sitter-wasm", "ignore"],
  // eventsource-parser: the stdio bridge reads the server's event streams without the SDK's client.
  mcp: ["@modelcontextprotocol/sdk", "express", "zod", "eventsource-parser"],
  app: [],
  archivist: ["zod", "eventsource-parser"],
  plugin: [],
};

/** The layer a repository-relative path belongs to, or undefined for anything unclassified. */
function layerOf(path: string): Layer | undefined {
  const parts = path.split(/[\\/]/);
  if (parts[0] === "tools" || parts[0] === "archivist" || parts[0] === "plugin") return parts[0];
  if (parts[0] !== "src") return undefined;
  if (parts[1] === "cli.ts") return "cli";
  if (parts[1] === "app.ts") return "app";
  const layer = parts[1];
  return layer !== undefined && layer in allowed && parts.length > 2 ? (layer as Layer) : undefined;
}

/** The npm package an import names (`@scope/name` or `name`), or undefined for ours and node's. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("node:")) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const resolveImport = (file: string, specifier: string): string => relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, ".ts");

/** Every file of ours that loading `entry` loads (type-only imports are erased, so they do not count). */
function runtimeClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of importsOf(file, { runtimeOnly: true })) if (specifier.startsWith(".")) visit(resolveImport(file, specifier));
  };
  visit(entry);
  return seen;
}

const ownFiles = [...sourceFiles("src"), ...sourceFiles("tools"), ...sourceFiles("plugin"), ...sourceFiles("archivist")];

describe("the layering rule (DESIGN §1)", () => {
  it("finds the source files and their imports", () => {
    expect(ownFiles).toContain(join("src", "core", "errors.ts"));
    expect(ownFiles).toContain(join("tools", "catalogue.ts"));
    expect(importsOf(join("tools", "catalogue.ts"))).toContain("./operation.js");
    // Multi-line import clauses are read too.
    expect(importsOf(join("tools", "memory.ts"))).toContain("./schemas.js");
  });

  it("classifies every file under src/ and tools/ into a layer", () => {
    expect(ownFiles.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it("lets each layer import only the layers below it", () => {
    const violations: string[] = [];
    for (const file of ownFiles) {
      const from = layerOf(file) as Layer;
      const loaded = importsOf(file, { runtimeOnly: true });
      for (const specifier of importsOf(file)) {
        if (!specifier.startsWith(".")) continue;
        const target = resolveImport(file, specifier);
        const to = layerOf(target);
        if (to === from || to === undefined) {
          if (to === undefined) violations.push(`${file} (${from}) imports ${target} (unknown)`);
          continue;
        }
        const typeOnly = !loaded.includes(specifier);
        if (!allowed[from].includes(to) && !(typeOnly && typesOnly[from]?.includes(to))) violations.push(`${file} (${from}) imports ${target} (${to})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("lets each layer use only the npm packages listed for it", () => {
    const violations: string[] = [];
    for (const file of ownFiles) {
      const layer = layerOf(file) as Layer;
      for (const specifier of importsOf(file)) {
        const name = packageOf(specifier);
        if (name !== undefined && !packages[layer].includes(name)) violations.push(`${file} (${layer}) uses ${name}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("keeps the store's implementations behind src/store: only src/store chooses one", () => {
    const implementations = [join("src", "store", "sqlite"), join("src", "store", "postgres")];
    const offending = ownFiles.filter(
      (file) => layerOf(file) !== "store" && importsOf(file).some((specifier) => implementations.some((folder) => resolveImport(file, specifier).startsWith(folder))),
    );
    expect(offending).toEqual([]);
  });

  it("loads no service or store module into the archivist process", () => {
    const loaded = runtimeClosure(join("archivist", "main.ts"));
    expect(loaded.size).toBeGreaterThan(5);
    // It calls the API through the typed client, which reads the catalogue's types and no schema.
    expect(loaded).toContain(join("src", "client", "operations.ts"));
    expect([...loaded].filter((file) => ["services", "store", "events", "tools"].includes(layerOf(file) ?? ""))).toEqual([]);
  });

  it("loads tree-sitter only in `cairn compile`: only src/cli/compile uses it, and only src/cli.ts loads that, on demand", () => {
    const compileFolder = join("src", "cli", "compile", "");
    const usesTreeSitter = ownFiles.filter((file) => importsOf(file).some((specifier) => packageOf(specifier)?.includes("tree-sitter")));
    expect(usesTreeSitter.length).toBeGreaterThan(0);
    expect(usesTreeSitter.filter((file) => !file.startsWith(compileFolder))).toEqual([]);
    const reachingIn = ownFiles.filter(
      (file) => !file.startsWith(compileFolder) && importsOf(file, { runtimeOnly: true }).some((specifier) => specifier.startsWith(".") && resolveImport(file, specifier).startsWith(compileFolder)),
    );
    expect(reachingIn).toEqual([join("src", "cli.ts")]);
    const statics = [...readFileSync(join(root, "src", "cli.ts"), "utf8").matchAll(STATIC_IMPORT)].map((match) => match[1] as string);
    expect(statics.filter((specifier) => specifier.includes("/compile/"))).toEqual([]);
  });

  it("follows runtime imports and skips type-only ones", () => {
    expect(importsOf(join("src", "events", "bus.ts"), { runtimeOnly: true })).not.toContain("../store/store.js");
    expect(importsOf(join("src", "events", "bus.ts"))).toContain("../store/store.js");
  });

  it("lets the web UI import only the wire records of the server's code", () => {
    const uiFiles = readdirSync(join(root, "ui", "src"), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
      .map((entry) => relative(root, join(entry.parentPath, entry.name)));
    const reaching = uiFiles.flatMap((file) =>
      importsOf(file)
        .filter((specifier) => specifier.startsWith("."))
        .map((specifier) => resolveImport(file, specifier))
        .filter((target) => !target.startsWith(join("ui", "")) && !target.startsWith(join("src", "wire", "")))
        .map((target) => `${file} imports ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  it("keeps SQL inside src/store", () => {
    const literal = /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g;
    const sql = /\bSELECT\s|\bINSERT\s+INTO\b|\bDELETE\s+FROM\b|\bUPDATE\s+\w+\s+SET\b/;
    const offending: string[] = [];
    for (const file of ownFiles) {
      if (layerOf(file) === "store") continue;
      for (const match of readFileSync(join(root, file), "utf8").matchAll(literal)) {
        if (sql.test(match[0])) offending.push(`${file}: ${match[0].slice(0, 80)}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("recognises SQL in a string literal when it sees one", () => {
    const sql = /\bSELECT\s|\bINSERT\s+INTO\b|\bDELETE\s+FROM\b|\bUPDATE\s+\w+\s+SET\b/;
    expect(sql.test("UPDATE agents SET role = ?")).toBe(true);
    expect(sql.test("SELECT * FROM memory")).toBe(true);
    expect(sql.test("select a role for the agent")).toBe(false);
  });
});

describe("the operation catalogue", () => {
  it("gives every operation a unique snake_case name", () => {
    const names = catalogue.map((operation) => operation.name);
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z]+(_[a-z]+)+$|^health$/);
  });

  it("gives every operation a title and a description", () => {
    for (const operation of catalogue) {
      expect(operation.title.trim(), operation.name).not.toBe("");
      expect(operation.description.trim(), operation.name).not.toBe("");
    }
  });

  it("binds every operation to a unique method and path", () => {
    const routes = catalogue.flatMap((operation) =>
      [operation.http.path, ...(operation.http.aliases ?? [])].map((path) => `${operation.http.method} ${path}`),
    );
    expect(new Set(routes).size).toBe(routes.length);
    for (const route of routes) expect(route).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \/[a-z0-9/:_.-]*$/);
  });

  it("names every path parameter as an input field", () => {
    for (const operation of catalogue) {
      for (const [, parameter] of operation.http.path.matchAll(/:([a-z_]+)/g)) {
        expect(Object.keys(operation.input.shape), `${operation.name} :${parameter}`).toContain(parameter);
      }
    }
  });
});

describe("error codes", () => {
  it("map every code to an HTTP error status", () => {
    expect(errorCodes.length).toBeGreaterThan(0);
    for (const code of errorCodes) {
      expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
      expect(errorStatus[code], code).toBeGreaterThanOrEqual(400);
      expect(errorStatus[code], code).toBeLessThan(600);
    }
  });
});

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: RouterLayer[] };
  slash: boolean;
  name: string;
  rawPath?: unknown;
}

describe("the express app", () => {
  let gateway: OperationGateway;
  beforeAll(async () => {
    gateway = await openGateway(loadConfig(testEnv(tempDir())), silentLogger);
  });
  afterAll(() => gateway.close());

  it("has no route that does not come from the catalogue, besides the documentation", () => {
    const { app } = createHttpApp(gateway, silentLogger, () => "http://127.0.0.1");
    const routes: string[] = [];
    const pathSpecificMiddleware: string[] = [];
    const walk = (stack: RouterLayer[], prefix = ""): void => {
      for (const layer of stack) {
        if (layer.route) {
          const path = layer.route.path === "/" && prefix !== "" ? prefix : `${prefix}${layer.route.path}`;
          for (const method of Object.keys(layer.route.methods)) routes.push(`${method.toUpperCase()} ${path}`);
        } else if (layer.handle.stack && (layer.slash || typeof layer.rawPath === "string")) {
          // A router: its routes are checked one by one, under the path it is mounted at.
          walk(layer.handle.stack, layer.slash ? prefix : `${prefix}${String(layer.rawPath)}`);
        } else if (!layer.slash) {
          // Middleware mounted at a path would answer requests like a hand-written route.
          pathSpecificMiddleware.push(layer.name);
        }
      }
    };
    walk((app as unknown as { router: { stack: RouterLayer[] } }).router.stack);

    const expected = [
      ...catalogue.flatMap((operation) =>
        [operation.http.path, ...(operation.http.aliases ?? [])].map((path) => `${operation.http.method} ${path}`),
      ),
      "GET /openapi.json",
      "GET /docs",
      "GET /docs/assets/:file",
      // The MCP adapter: its tools are the catalogue's operations.
      "POST /mcp",
      "GET /mcp",
      "DELETE /mcp",
      // OAuth for MCP clients: its own wire format (form bodies, OAuth errors).
      "POST /oauth/token",
      "POST /oauth/register",
      "POST /oauth/revoke",
      // The authorization endpoint and its consent form: HTML pages for a human.
      "GET /oauth/authorize",
      "POST /oauth/authorize",
      "GET /.well-known/oauth-authorization-server",
      "GET /.well-known/oauth-protected-resource",
      "GET /.well-known/oauth-protected-resource/mcp",
      // Prometheus scrapes: its own text format, and a scraper's token that is no agent.
      "GET /metrics",
      // The web UI: its files, and login (which sets a cookie) outside the API.
      "GET /",
      "GET /ui",
      "GET /ui/config",
      "POST /ui/login",
      "POST /ui/logout",
      "GET /ui/{*file}",
    ];
    expect(pathSpecificMiddleware).toEqual([]);
    expect(routes.sort()).toEqual(expected.sort());
  });
});
