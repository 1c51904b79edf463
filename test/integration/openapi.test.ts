import { Validator } from "@seriousme/openapi-schema-validator";
import { beforeAll, describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";
import { errorStatus } from "../../src/core/errors.js";
import { catalogue } from "../../tools/catalogue.js";
import type { Operation } from "../../tools/operation.js";
import { textBodyOf } from "../../tools/layout.js";
import { serverForSuite } from "../helpers/suite.js";

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: unknown;
}

interface OperationObject {
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
}

interface Document {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, unknown> };
}

const openApiPath = (path: string): string => path.replace(/:([a-z_]+)/g, "{$1}");
const pathsOf = (operation: Operation): string[] => [operation.http.path, ...(operation.http.aliases ?? [])];
const pathParameters = (path: string): string[] => [...path.matchAll(/:([a-z_]+)/g)].map((match) => match[1] as string);
const headerFields = (operation: Operation): string[] => Object.keys(operation.http.headers ?? {});
const ERROR_STATUSES = new Set<string>(Object.values(errorStatus).map(String));

describe("GET /openapi.json", () => {
  const server = serverForSuite();
  let doc: Document;
  beforeAll(async () => {
    const response = await server.request<Document>("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    doc = response.body;
  });

  const operationAt = (operation: Operation, path: string): OperationObject | undefined =>
    doc.paths[openApiPath(path)]?.[operation.http.method.toLowerCase()];

  it("is served without credentials as OpenAPI 3.1", () => {
    expect(doc.openapi).toBe("3.1.0");
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("resolves every $ref to a component schema", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1] as string);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas, ref).toHaveProperty([ref.replace("#/components/schemas/", "")]);
    }
  });

  it("lists every catalogue operation at its method and path, aliases included", () => {
    for (const operation of catalogue) {
      for (const path of pathsOf(operation)) expect(operationAt(operation, path), `${operation.http.method} ${path}`).toBeDefined();
    }
    expect(doc.paths).toHaveProperty(["/participants", "get"]);
  });

  it("lists the catalogue's routes and the transport routes (MCP, OAuth, metrics), nothing else", () => {
    const transport = [
      "POST /mcp",
      "GET /mcp",
      "DELETE /mcp",
      "GET /metrics",
      "POST /oauth/token",
      "POST /oauth/register",
      "POST /oauth/revoke",
      "GET /oauth/authorize",
      "POST /oauth/authorize",
      "GET /.well-known/oauth-authorization-server",
      "GET /.well-known/oauth-protected-resource",
    ];
    const expected = new Set([...catalogue.flatMap((operation) => pathsOf(operation).map((path) => `${operation.http.method} ${openApiPath(path)}`)), ...transport]);
    const listed = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(listed.sort()).toEqual([...expected].sort());
  });

  it("names each operation by its catalogue name, with unique operation ids", () => {
    const ids: string[] = [];
    for (const operation of catalogue) {
      expect(operationAt(operation, operation.http.path)?.operationId).toBe(operation.name);
      for (const path of pathsOf(operation)) {
        const id = operationAt(operation, path)?.operationId ?? "";
        expect(id.startsWith(operation.name), id).toBe(true);
        ids.push(id);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("gives each operation a summary and a description", () => {
    for (const operation of catalogue) {
      for (const path of pathsOf(operation)) {
        const documented = operationAt(operation, path);
        expect(documented?.summary, operation.name).toBe(operation.title);
        expect(documented?.description, operation.name).toContain(operation.description);
      }
    }
  });

  it("documents each operation's success status and its error responses", () => {
    for (const operation of catalogue) {
      const responses = operationAt(operation, operation.http.path)?.responses ?? {};
      expect(responses, operation.name).toHaveProperty([String(operation.http.status)]);
      for (const other of operation.http.otherStatuses ?? []) {
        expect(responses, operation.name).toHaveProperty([String(other.status)]);
        if (other.status === 204) expect(responses["204"]?.content, operation.name).toBeUndefined();
      }
      if (operation.output !== undefined && operation.http.status !== 204) {
        const mediaType = operation.kind === "stream" ? "text/event-stream" : (operation.http.contentType ?? "application/json");
        expect(responses[String(operation.http.status)]?.content?.[mediaType]?.schema, operation.name).toBeDefined();
      }
      const errors = Object.keys(responses).filter((status) => Number(status) >= 400);
      expect(errors, operation.name).toEqual(expect.arrayContaining(["422", "500"]));
      for (const status of errors) {
        expect(ERROR_STATUSES.has(status), `${operation.name} ${status}`).toBe(true);
        expect(responses[status]?.content?.["application/json"]?.schema, `${operation.name} ${status}`).toEqual({
          $ref: "#/components/schemas/Error",
        });
      }
      if (operation.access !== "public") expect(errors, operation.name).toContain("401");
      for (const code of operation.errors) expect(errors, `${operation.name} ${code}`).toContain(String(errorStatus[code]));
    }
  });

  it("documents paging headers on lists and Idempotency-Key on authenticated POSTs", () => {
    for (const operation of catalogue) {
      const documented = operationAt(operation, operation.http.path);
      const headers = Object.keys(documented?.responses[String(operation.http.status)]?.headers ?? {});
      expect(headers, operation.name).toContain("X-Request-Id");
      if (operation.kind === "list") expect(headers, operation.name).toEqual(expect.arrayContaining(["X-Next-Cursor", "Link"]));
      if (operation.http.method === "POST" && operation.access === "agent") {
        expect(documented?.parameters?.map((parameter) => parameter.name), operation.name).toContain("Idempotency-Key");
      }
    }
  });

  it("describes the error body as {detail, code, errors}", () => {
    const error = doc.components.schemas.Error as { required: string[]; properties: Record<string, unknown> };
    expect(error.required).toEqual(expect.arrayContaining(["detail", "code"]));
    expect(Object.keys(error.properties)).toEqual(expect.arrayContaining(["detail", "code", "errors"]));
  });

  it("documents path parameters, query fields of GET operations, and bodies", () => {
    for (const operation of catalogue) {
      const fields = Object.keys(operation.input.shape);
      for (const path of pathsOf(operation)) {
        const documented = operationAt(operation, path);
        const parameters = documented?.parameters ?? [];
        const named = (where: string): string[] => parameters.filter((parameter) => parameter.in === where).map((parameter) => parameter.name);
        expect(named("path").sort(), operation.name).toEqual(pathParameters(path).sort());
        for (const parameter of parameters.filter((parameter) => parameter.in === "path")) expect(parameter.required).toBe(true);
        for (const parameter of parameters) expect(parameter.schema, `${operation.name} ${parameter.name}`).toBeDefined();
        const inQuery = (operation.http.query ?? []) as string[];
        const rest = fields.filter((field) => !pathParameters(path).includes(field) && !headerFields(operation).includes(field) && !inQuery.includes(field));
        expect(named("query").filter((name) => inQuery.includes(name)).sort(), operation.name).toEqual([...inQuery].sort());
        if (operation.http.method === "GET") {
          expect(named("query").sort(), operation.name).toEqual(rest.sort());
          expect(documented?.requestBody, operation.name).toBeUndefined();
        } else if (textBodyOf(operation)) {
          // A body of text (the JSON Lines import) is one field; the others are query parameters.
          const text = textBodyOf(operation) as { field: string; mediaType: string };
          expect(documented?.requestBody?.content[text.mediaType]?.schema, operation.name).toBeDefined();
          expect(named("query").sort(), operation.name).toEqual(rest.filter((field) => field !== text.field).sort());
        } else if (rest.length > 0) {
          const schema = documented?.requestBody?.content["application/json"]?.schema as { properties?: Record<string, unknown> };
          expect(Object.keys(schema.properties ?? {}).sort(), operation.name).toEqual(rest.sort());
        }
        for (const header of Object.values(operation.http.headers ?? {}) as string[]) {
          expect(named("header").map((name) => name.toLowerCase()), operation.name).toContain(header.toLowerCase());
        }
      }
    }
  });

  it("marks required query fields as required", () => {
    const delta = catalogue.find((operation) => operation.name === "memory_delta") as Operation;
    const since = operationAt(delta, delta.http.path)?.parameters?.find((parameter) => parameter.name === "since");
    expect(since?.required).toBe(true);
    const limit = operationAt(delta, delta.http.path)?.parameters?.find((parameter) => parameter.name === "limit");
    expect(limit?.required).toBe(false);
    expect((limit?.schema as { maximum?: number }).maximum).toBe(500);
  });

  it("documents request body fields with the schemas that validate them", () => {
    const write = catalogue.find((operation) => operation.name === "memory_write") as Operation;
    const schema = operationAt(write, write.http.path)?.requestBody?.content["application/json"]?.schema as {
      required?: string[];
      additionalProperties?: unknown;
      properties: Record<string, { maximum?: number; minimum?: number }>;
    };
    expect(schema.required).toEqual(["content"]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.confidence).toMatchObject({ minimum: 0, maximum: 1 });
  });
});

describe("GET /docs", () => {
  it("serves an HTML page without credentials", async ({ server }) => {
    const response = await server.request("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.text).toContain("/openapi.json");
  });

  it("loads every script and style from this server", async ({ server }) => {
    const html = (await server.request("/docs")).text;
    expect(html).not.toMatch(/https?:\/\//);
    const urls = [
      ...html.matchAll(/<script[^>]*\ssrc=["']([^"']+)["']/g),
      ...html.matchAll(/<link[^>]*\shref=["']([^"']+)["']/g),
      ...html.matchAll(/url\(\s*["']?([^"')]+)["']?\s*\)/g),
      ...html.matchAll(/@import\s+["']([^"']+)["']/g),
    ].map((match) => match[1] as string);
    expect(urls.length).toBeGreaterThanOrEqual(2);
    expect(urls.some((url) => url.endsWith(".js"))).toBe(true);
    expect(urls.some((url) => url.endsWith(".css"))).toBe(true);
    for (const url of urls) {
      expect(url, url).not.toMatch(/^(?:[a-z][a-z0-9+.-]*:)?\/\//i);
      const resolved = new URL(url, `${server.url}/docs`);
      expect(resolved.origin).toBe(new URL(server.url).origin);
      const asset = await fetch(resolved);
      expect(asset.status, url).toBe(200);
      expect((await asset.arrayBuffer()).byteLength, url).toBeGreaterThan(0);
    }
  });

  it("serves only its own assets", async ({ server }) => {
    expect((await server.request("/docs/assets/not-there.js")).status).toBe(404);
    expect((await server.request("/docs/assets/..%2Fpackage.json")).status).toBe(404);
    expect((await server.request("/docs/assets/%2E%2E%2F%2E%2E%2Fpackage.json")).status).toBe(404);
  });
});
