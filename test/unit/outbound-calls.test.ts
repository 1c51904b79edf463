import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { commandGraph, connectionsIn, edgesOf, sourceFile, type ModuleGraph } from "../helpers/module-graph.js";

// DESIGN §4a: src/net/fetch.ts is the server's only way out. Nothing else that `cairn serve` loads
// may call fetch, http(s).request/get, net.connect, tls.connect or a client package.

const NET = join("src", "net", "");

describe("the modules `cairn serve` loads", () => {
  let graph: ModuleGraph;
  beforeAll(() => {
    graph = commandGraph("serve");
  });

  it("are found from src/cli.ts through the serve command, the composition root, the services and the worker threads", () => {
    for (const file of [
      "src/cli.ts",
      "src/cli/serve.ts",
      "src/app.ts",
      "tools/gateway.ts",
      "src/http/server.ts",
      "src/mcp/http.ts",
      "src/services/memory.ts",
      "src/services/graph/graph-worker.ts",
      "src/embed/onnx-worker.ts",
      "src/embed/model-download.ts",
      "src/net/fetch.ts",
    ]) {
      expect(graph.modules.has(join(...file.split("/"))), file).toBe(true);
    }
    expect(graph.modules.size).toBeGreaterThan(100);
  });

  it("leave out what only other commands load", () => {
    const loaded = [...graph.modules.keys()];
    expect(loaded.filter((file) => file.startsWith(join("src", "cli", "compile", "")))).toEqual([]);
    expect(loaded).not.toContain(join("src", "cli", "mcp.ts"));
    expect(loaded).not.toContain(join("src", "cli", "search.ts"));
    expect(loaded.filter((file) => file.startsWith(join("archivist", "")))).toEqual([]);
  });

  it("can all be followed: every relative import resolves and every import() names its module", () => {
    expect(graph.unresolved).toEqual([]);
    expect(graph.opaqueImports).toEqual([]);
  });

  it("include none of the CLI's own clients of a server", () => {
    const loaded = [...graph.modules.keys()];
    for (const client of ["src/mcp/bridge.ts", "src/cli/owner-client.ts", "src/cli/control.ts", "src/cli/maintenance.ts"]) {
      expect(loaded, client).not.toContain(join(...client.split("/")));
    }
  });

  it("open no connection of their own: only src/net does", () => {
    const offending = [...graph.modules.keys()].filter((file) => !file.startsWith(NET)).flatMap((file) => connectionsIn(sourceFile(file)));
    expect(offending).toEqual([]);
  });

  it("include src/net, where the scan does find the fetcher's own requests", () => {
    expect(connectionsIn(sourceFile(join("src", "net", "fetch.ts")))).toEqual([
      expect.stringMatching(/fetch\.ts:\d+: imports request from node:http$/),
      expect.stringMatching(/fetch\.ts:\d+: imports request from node:https$/),
    ]);
  });
});

describe("the scan for connections", () => {
  const scan = (text: string): string[] => connectionsIn(sourceFile("example.ts", text)).map((line) => line.replace(/^example\.ts:\d+: /, ""));

  it.each([
    ["await fetch(url);", "fetch(…)"],
    ["const get = fetch;", "uses fetch"],
    ["call({ fetch });", "uses fetch"],
    ["await globalThis.fetch(url);", "globalThis.fetch"],
    ['await globalThis["fetch"](url);', 'globalThis["fetch"]'],
    ["const { fetch: f } = globalThis;", "destructures fetch from globalThis"],
    ["new WebSocket(url);", "new WebSocket(…)"],
    ['import http from "node:http";\nhttp.request(options);', "http.request"],
    ['import * as https from "https";\nhttps.get(url);', "https.get"],
    ['import * as h from "node:http";\nconst { get } = h;', "destructures get from h"],
    ['import * as h from "node:http";\nh["request"](options);', 'h["request"]'],
    ['import { request } from "node:https";', "imports request from node:https"],
    ['import { get as download } from "node:http";', "imports get from node:http"],
    ['import { connect } from "node:net";', "imports connect from node:net"],
    ['import net from "node:net";\nnet.createConnection(80, "example.com");', "net.createConnection"],
    ['import * as tls from "node:tls";\ntls.connect(443, "example.com");', "tls.connect"],
    ['import { connect } from "node:http2";', "imports connect from node:http2"],
    ['import { request } from "undici";', "imports undici"],
    ['import "undici";', "imports undici"],
    ['export { fetch } from "undici";', "imports undici"],
    ['const undici = await import("undici");', "imports undici"],
    ['const http = await import("node:http");', "imports node:http at run time"],
    ['import { Client } from "@modelcontextprotocol/sdk/client/index.js";', "imports @modelcontextprotocol/sdk/client/index.js"],
  ])("finds %s", (text, what) => {
    expect(scan(text)).toContain(what);
  });

  it.each([
    "// await fetch(url) in a comment",
    "/* http.request(options) */",
    'const text = "fetch(url) and http.request(x)";',
    "const template = `await fetch(${url})`;",
    "await outbound.fetch(url);",
    "const client = { fetch: 1, request() {} };",
    "type Fetch = typeof fetch;",
    "interface Options { fetch?: typeof fetch }",
    'import { createServer, request as _unused } from "./http.js";',
    'import { createServer, type IncomingMessage } from "node:http";\ncreateServer();',
    'import type { RequestOptions } from "node:https";',
    'import { isIP } from "node:net";\nisIP("::1");',
    'import * as http from "node:http";\nhttp.createServer();',
  ])("passes %s", (text) => {
    expect(scan(text)).toEqual([]);
  });
});

describe("the module graph's edges", () => {
  it("follow static imports, re-exports and literal import(), and skip type-only ones", () => {
    const edges = edgesOf(
      sourceFile(
        "example.ts",
        ['import { a } from "./a.js";', 'import type { B } from "./b.js";', 'import { type C } from "./c.js";', 'export * from "./d.js";', 'export type { E } from "./e.js";', 'await import("./f.js");', "await import(name);"].join("\n"),
      ),
    );
    // `import { type C }` still loads ./c.js under verbatimModuleSyntax.
    expect(edges.specifiers).toEqual(["./a.js", "./c.js", "./d.js", "./f.js"]);
    expect(edges.opaqueImports).toEqual(["import(name)"]);
  });

  it("treat a module URL as a worker's entry only beside a Worker", () => {
    const worker = edgesOf(sourceFile("example.ts", 'new Worker(new URL("./worker.js", import.meta.url));'));
    expect(worker.workers).toEqual(["./worker.js"]);
    const child = edgesOf(sourceFile("example.ts", 'spawn(process.execPath, [fileURLToPath(new URL("../cli.js", import.meta.url))]);'));
    expect(child.workers).toEqual([]);
  });
});
