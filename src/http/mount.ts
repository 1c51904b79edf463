import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { BODILESS_STATUSES, parseInput, type Operation, type StreamSource } from "../../tools/operation.js";
import { idempotencyKey, leaseToken, type Caller, type OperationGateway } from "../../tools/gateway.js";
import { parseValue } from "../../tools/validation.js";
import { jsonBody } from "./body.js";
import { rawInput } from "./input.js";
import { serveEventStream, type SseOptions, type StreamRegistry } from "./sse.js";
import { inputLayout } from "../../tools/layout.js";
import { credentialsOf } from "./credentials.js";
import type { HostPolicy } from "./hosts.js";
import { discardSpooledBody, spooledTextBody } from "./spooled-body.js";
import { isTextStream, sendTextStream, textBody } from "./text-body.js";
import { textBodyOf } from "../../tools/layout.js";
import { tokensOfChars } from "../core/tokens.js";

interface RouteLocals {
  requestId: string;
  caller?: Caller | null;
  /** The catalogue name, for the request metrics. */
  operation?: string;
}

function nextPageLink(request: Request, cursor: string): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(request.query)) {
    if (key === "cursor") continue;
    for (const item of Array.isArray(value) ? value : [value]) if (typeof item === "string") query.append(key, item);
  }
  query.set("cursor", cursor);
  return `<${request.baseUrl}${request.path}?${query.toString()}>; rel="next"`;
}

/** Literal segments before parameters, so `/memory/search` is not taken for `/memory/:id`. */
const byParameterCount = (a: Operation, b: Operation): number =>
  (a.http.path.match(/:/g)?.length ?? 0) - (b.http.path.match(/:/g)?.length ?? 0);

/** `/tasks/:id/claim` → ["/tasks", "/:id/claim"]; `/tasks` → ["/tasks", "/"]. */
function splitFirstSegment(path: string): [string, string] {
  const slash = path.indexOf("/", 1);
  return slash === -1 ? [path, "/"] : [path.slice(0, slash), path.slice(slash)];
}

type Middleware = (request: Request, response: Response, next: NextFunction) => void;

const noBody: Middleware = (_request, _response, next) => next();

/**
 * The body reader an operation needs (text, JSON, or none), chosen on its first request: choosing
 * takes the input schema as JSON Schema, which for the whole catalogue at once is about a tenth of
 * a server's start.
 */
function bodyReader(operation: Operation, maxBytes: number): Middleware {
  let reader: Middleware | undefined;
  const choose = (): Middleware => {
    const text = textBodyOf(operation);
    if (text) return (operation.http.spooledBody ? spooledTextBody : textBody)(text.mediaType, maxBytes);
    return inputLayout(operation).inBody ? jsonBody(maxBytes) : noBody;
  };
  return (request, response, next) => (reader ??= choose())(request, response, next);
}

/**
 * Mounts every catalogue operation as a route: the only way a REST route comes to exist. Routes
 * are grouped under one sub-router per first path segment, so a request is matched against its
 * own resource's dozen routes rather than every route of the API.
 */
export function mountOperations(router: Router, gateway: OperationGateway, hosts: HostPolicy, streams: { registry: StreamRegistry; options: SseOptions }): void {
  const groups = new Map<string, Router>();
  const groupFor = (prefix: string): Router => {
    let group = groups.get(prefix);
    if (!group) {
      group = express.Router();
      groups.set(prefix, group);
      router.use(prefix, group);
    }
    return group;
  };
  for (const operation of [...gateway.operations].sort(byParameterCount)) {
    // Express 5 passes a rejected promise on to the error handler.
    const authenticate = async (request: Request, response: Response<unknown, RouteLocals>, next: NextFunction): Promise<void> => {
      response.locals.operation = operation.name;
      response.locals.caller = operation.access === "agent" ? await gateway.authenticate(credentialsOf(request, hosts, operation.http.queryCredentials === true)) : null;
      // The role decides before the body is read: 403, not a 415 or 422 that describes the input.
      gateway.authorize(operation, response.locals.caller);
      next();
    };
    const handle = async (request: Request, response: Response<unknown, RouteLocals>): Promise<void> => {
      try {
        await answer(request, response);
      } finally {
        await discardSpooledBody(request);
      }
    };
    const answer = async (request: Request, response: Response<unknown, RouteLocals>): Promise<void> => {
      const input = parseInput(operation, rawInput(operation, request));
      const result = await gateway.invoke(operation, {
        caller: response.locals.caller ?? null,
        input,
        requestId: response.locals.requestId,
        registrationKey: request.get("x-registration-key"),
        idempotencyKey: parseValue(idempotencyKey, request.get("idempotency-key"), "Idempotency-Key"),
        leaseToken: leaseToken.parse(request.get("x-archivist-lease")),
        address: request.socket.remoteAddress,
      });
      response.set(result.headers);
      if (operation.kind === "stream") {
        serveEventStream(request, response, result.body as StreamSource, streams.registry, streams.options);
        return;
      }
      if (result.replayed) response.set("Idempotent-Replayed", "true");
      if (result.nextCursor) {
        response.set("X-Next-Cursor", result.nextCursor);
        response.set("Link", nextPageLink(request, result.nextCursor));
      }
      if (operation.http.contentType && isTextStream(result.body)) {
        await sendTextStream(response, result.status, operation.http.contentType, result.body, gateway.log);
        return;
      }
      response.status(result.status);
      if (BODILESS_STATUSES.has(result.status) || result.body === undefined) response.end();
      else if (operation.http.contentType && typeof result.body === "string") response.type(operation.http.contentType).send(result.body);
      else {
        const json = JSON.stringify(result.body);
        const caller = response.locals.caller;
        if (caller) gateway.metrics.served(caller.agentId, operation.name, "rest", tokensOfChars(json.length));
        response.type(operation.http.contentType ?? "application/json").send(json);
      }
    };
    const handlers = [authenticate, bodyReader(operation, gateway.config.MAX_BODY_BYTES), handle];
    for (const path of [operation.http.path, ...(operation.http.aliases ?? [])]) {
      const method = operation.http.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete";
      const [prefix, rest] = splitFirstSegment(path);
      groupFor(prefix)[method](rest, ...handlers);
    }
  }
}
