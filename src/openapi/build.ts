import { z } from "zod";
import { transportPaths } from "./transport-paths.js";
import { errorBody, errorStatus, type ErrorCode } from "../core/errors.js";
import { inputLayout, type JsonSchema } from "../../tools/layout.js";
import { BODILESS_STATUSES, isReadOnlyKind, QUERY_CREDENTIALS, type Operation } from "../../tools/operation.js";
import { textBodyOf } from "../../tools/layout.js";

type Json = Record<string, unknown>;

// Any route may refuse a foreign Host (403) and a path that does not decode (400), before routing.
const COMMON_ERRORS: ErrorCode[] = ["BAD_REQUEST", "FORBIDDEN", "VALIDATION_FAILED", "RATE_LIMITED", "INTERNAL", "UNAVAILABLE"];

const errorDescriptions: Record<ErrorCode, string> = {
  BAD_REQUEST: "malformed JSON or path, unparsable If-Match or an ambiguous id prefix",
  UNAUTHENTICATED: "missing or wrong credentials",
  FORBIDDEN: "not allowed: the caller's role or relation to the resource, a Host the server does not answer to, or a change by the web UI's cookie from another site",
  NOT_FOUND: "no such resource, or one you may not see",
  CONFLICT: "the resource's state does not allow this",
  PRECONDITION_FAILED: "If-Match does not match the current version",
  PAYLOAD_TOO_LARGE: "body or field too large",
  UNSUPPORTED_MEDIA_TYPE: "the body is not JSON",
  VALIDATION_FAILED: "the input does not match the schema",
  RATE_LIMITED: "too many requests, or too many failed credentials from this address; see Retry-After",
  INTERNAL: "unexpected server error",
  UPSTREAM_ERROR: "a peer or a feed the request waited for failed; the detail names it by URL, without query",
  UNAVAILABLE: "shutting down or not ready; see Retry-After",
};

const openApiPath = (path: string): string => path.replace(/:([a-z_]+)/g, "{$1}");

/** Converts a zod schema, moving named sub-schemas into `components.schemas`. */
function toSchema(schema: z.ZodType, io: "input" | "output", components: Json): JsonSchema {
  const converted = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  const { $schema: _schema, $defs, ...rest } = converted as JsonSchema & { $defs?: Record<string, JsonSchema> };
  for (const [name, definition] of Object.entries($defs ?? {})) components[name] ??= retarget(definition);
  return retarget(rest);
}

function retarget<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(/"#\/\$defs\//g, '"#/components/schemas/')) as T;
}

function security(operation: Operation): Json[] {
  if (operation.access === "agent") {
    const schemes: Json[] = [{ agentId: [], apiKey: [] }];
    if (operation.http.queryCredentials) schemes.push({ agentIdQuery: [], apiKeyQuery: [] });
    if (operation.mesh) {
      schemes.push({ meshBearer: [] });
      if (operation.http.queryCredentials) schemes.push({ meshTokenQuery: [] });
    }
    return schemes;
  }
  if (operation.access === "registration") {
    return operation.name === "agent_self_register" ? [{}, { registrationKey: [] }] : [{ registrationKey: [] }];
  }
  return [];
}

function operationObject(operation: Operation, components: Json): Json {
  const layout = inputLayout(operation);
  const text = textBodyOf(operation);
  const propertySchema = (name: string): JsonSchema => {
    const field = operation.input.shape[name] as z.ZodType;
    return toSchema(field, "input", components);
  };
  const parameters: Json[] = [
    ...layout.path.map((name) => ({ name, in: "path", required: true, schema: propertySchema(name) })),
    ...(layout.inBody && !text
      ? []
      : layout.rest.filter((name) => name !== text?.field).map((name) => ({
          name,
          in: "query",
          required: layout.required.includes(name),
          schema: propertySchema(name),
          ...(propertySchema(name).description ? { description: propertySchema(name).description } : {}),
        }))),
    ...layout.query.map((name) => ({
      name,
      in: "query",
      required: false,
      schema: propertySchema(name),
      ...(propertySchema(name).description ? { description: propertySchema(name).description } : {}),
    })),
    ...Object.entries(layout.header).map(([name, header]) => ({
      name: header,
      in: "header",
      required: false,
      schema: propertySchema(name),
    })),
  ];
  if (operation.http.method === "POST" && operation.access === "agent") {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description: "replays the first response for 24 h when the same request is repeated",
      schema: { type: "string", minLength: 1, maxLength: 200 },
    });
  }
  const archivistMayCall = operation.access === "agent" && (operation.roles === undefined || operation.roles.includes("archivist"));
  if (archivistMayCall && !isReadOnlyKind(operation.kind)) {
    parameters.push({
      name: "X-Archivist-Lease",
      in: "header",
      required: false,
      description: "the archivist's lease token (from POST /archivist/lease); a write carrying a token that is no longer current is refused with 409",
      schema: { type: "string", pattern: "^[0-9]{1,15}$" },
    });
  }
  const result: Json = {
    operationId: operation.name,
    summary: operation.title,
    description: operation.roles ? `${operation.description}\n\nRoles: ${operation.roles.join(", ")}.` : operation.description,
    tags: [operation.name.split("_")[0]],
    security: security(operation),
    parameters,
    responses: responses(operation, components),
  };
  if (text) {
    result.requestBody = { required: true, content: { [text.mediaType]: { schema: propertySchema(text.field) } } };
  } else if (layout.inBody) {
    const omit: Record<string, true> = {};
    for (const key of [...layout.path, ...Object.keys(layout.header), ...layout.query]) omit[key] = true;
    const body = operation.input.omit(omit as never);
    result.requestBody = {
      required: layout.required.some((name) => layout.rest.includes(name)),
      content: { "application/json": { schema: toSchema(body, "input", components) } },
    };
  }
  return result;
}

function responses(operation: Operation, components: Json): Json {
  const out: Json = {};
  const headers: Json = { "X-Request-Id": { schema: { type: "string" }, description: "the request's id" } };
  for (const [name, description] of Object.entries(operation.http.responseHeaders ?? {})) {
    headers[name] = { schema: { type: "string" }, description };
  }
  if (operation.kind === "list") {
    headers["X-Next-Cursor"] = { schema: { type: "string" }, description: "cursor of the next page, when there is one" };
    headers.Link = { schema: { type: "string" }, description: 'URL of the next page with rel="next"' };
  }
  const body =
    operation.output === undefined
      ? undefined
      : toSchema(operation.kind === "list" ? z.array(operation.output) : operation.output, "output", components);
  const mediaType = operation.kind === "stream" ? "text/event-stream" : (operation.http.contentType ?? "application/json");
  const success = (description: string): Json => ({
    description,
    headers,
    ...(body ? { content: { [mediaType]: { schema: body } } } : {}),
  });
  const described =
    operation.kind === "list"
      ? "one page, in order"
      : operation.kind === "stream"
        ? "server-sent events: each is `id: <seq>`, `event: <type>`, `data: <the JSON below>`"
        : "success";
  out[String(operation.http.status)] = success(described);
  for (const other of operation.http.otherStatuses ?? []) {
    out[String(other.status)] = BODILESS_STATUSES.has(other.status) ? { description: other.description, headers } : success(other.description);
  }
  const codes = new Set<ErrorCode>([...COMMON_ERRORS, ...operation.errors]);
  if (operation.access !== "public") codes.add("UNAUTHENTICATED");
  if (operation.http.method !== "GET" && inputLayout(operation).inBody) {
    codes.add("PAYLOAD_TOO_LARGE");
    codes.add("UNSUPPORTED_MEDIA_TYPE");
  }
  for (const code of [...codes].sort((a, b) => errorStatus[a] - errorStatus[b])) {
    out[String(errorStatus[code])] = {
      description: errorDescriptions[code],
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  return out;
}

export interface OpenApiOptions {
  version: string;
  serverUrl: string;
}

/** The OpenAPI 3.1 document, generated from the same schemas that validate requests. */
export function buildOpenApi(operations: readonly Operation[], options: OpenApiOptions): Json {
  const components: Json = {};
  components.Error = toSchema(errorBody, "output", components);
  const paths: Record<string, Json> = {};
  for (const operation of operations) {
    for (const [index, path] of [operation.http.path, ...(operation.http.aliases ?? [])].entries()) {
      const item = (paths[openApiPath(path)] ??= {});
      const documented = operationObject(operation, components);
      // operationId must be unique in the document: an alias path gets one derived from the path.
      if (index > 0) documented.operationId = `${operation.name}_via${path.replace(/[^a-z0-9]+/g, "_")}`;
      item[operation.http.method.toLowerCase()] = documented;
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Cairn",
      version: options.version,
      description:
        "Shared memory and coordination for teams of software agents. Authenticate with the X-Agent-ID and " +
        "X-API-Key headers. Errors are `{detail, code}`; lists page with `cursor` (see X-Next-Cursor).",
    },
    servers: [{ url: options.serverUrl }],
    paths: { ...paths, ...transportPaths() },
    components: {
      schemas: components,
      securitySchemes: {
        agentId: { type: "apiKey", in: "header", name: "X-Agent-ID" },
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
        registrationKey: { type: "apiKey", in: "header", name: "x-registration-key" },
        bearer: { type: "http", scheme: "bearer", description: "a token from POST /oauth/token" },
        agentIdQuery: { type: "apiKey", in: "query", name: QUERY_CREDENTIALS.agentId, description: "feed, merkle and gossip routes only, for clients that are given a URL; never logged" },
        apiKeyQuery: { type: "apiKey", in: "query", name: QUERY_CREDENTIALS.apiKey, description: "feed, merkle and gossip routes only, with agent_id; never logged" },
        meshBearer: { type: "http", scheme: "bearer", description: "a peer's mesh token (cairn_mt_…): the feed, merkle, gossip and handshake routes only" },
        meshTokenQuery: { type: "apiKey", in: "query", name: QUERY_CREDENTIALS.meshToken, description: "a peer's mesh token: the feed, merkle and gossip routes only; never logged" },
      },
    },
  };
}
