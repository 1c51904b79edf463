import type { z } from "zod";
import type { HttpMethod } from "../src/wire/http.js";
import type { Role } from "../src/wire/roles.js";
import type { MeshCapability } from "../src/wire/mesh.js";
import type { ErrorCode } from "../src/core/errors.js";
import type { Caller } from "../src/services/caller.js";
import type { Services } from "../src/services/index.js";
import type { Page } from "../src/services/paging.js";
import { invalidFields } from "../src/core/errors.js";
import { validationError } from "./validation.js";

/**
 * What an operation does to state. It decides the default success status, whether viewers may
 * call it, and (for MCP, with `destructive`) the read-only / destructive / idempotent hints.
 */
export type OperationKind = "read" | "list" | "create" | "update" | "delete" | "action" | "stream";

/**
 * Kinds that change nothing: a viewer or a read-only token may call them, and the archivist's
 * lease does not fence them.
 */
export const isReadOnlyKind = (kind: OperationKind): boolean => kind === "read" || kind === "list" || kind === "stream";

/**
 * What a `stream` operation hands its transport: items in order, pulled only as fast as the
 * client takes them. `onReady` says when `next` has more; `onEnd` when the source has finished.
 */
export interface StreamSource {
  /** The client's resume point could not be honoured: it should refetch state. */
  readonly reset: boolean;
  next(max: number): Promise<{ seq: number; type: string }[]>;
  onReady(callback: () => void): void;
  onEnd(listener: (reason: string) => void): void;
  end(): void;
}

/** `agent`: credentials required. `registration`: the registration-key header instead. `public`: nothing. */
export type Access = "agent" | "registration" | "public";

interface AgentContext {
  services: Services;
  caller: Caller;
  requestId: string;
}

interface AnonymousContext {
  services: Services;
  caller: null;
  requestId: string;
  registrationKey: string | undefined;
  /** The client's address: failed registration keys are throttled per address. */
  address: string | undefined;
}

type ContextFor<A extends Access> = A extends "agent" ? AgentContext : AnonymousContext;

/** A handler's answer when it needs a status or headers other than the defaults. */
export class Reply<T> {
  constructor(
    readonly body: T,
    readonly status?: number,
    readonly headers: Record<string, string> = {},
  ) {}
}

export const reply = <T>(body: T, options: { status?: number; headers?: Record<string, string> } = {}): Reply<T> =>
  new Reply(body, options.status, options.headers);

/** Statuses whose responses carry no body, whatever the operation's output. */
export const BODILESS_STATUSES: ReadonlySet<number> = new Set([204, 304]);

/** `304 Not Modified`: the client's copy is current; only headers (the entity tag) go back. */
export const notModified = (headers: Record<string, string>): Reply<never> =>
  // No body is sent with a 304, so none is typed: `never` fits any operation's output.
  new Reply(undefined as never, 304, headers);

export interface HttpBinding<Keys extends string> {
  method: HttpMethod;
  /** Express-style path (`/memory/:id`); path parameters are input fields of the same name. */
  path: string;
  /** Further paths for the same operation (the seed's `GET /participants`). */
  aliases?: string[];
  /** Success status when it is not the kind's default. */
  status?: number;
  /** Other success statuses the handler may choose (documented in OpenAPI). */
  otherStatuses?: { status: number; description: string }[];
  /** Input fields read from request headers: field → header name. */
  headers?: Partial<Record<Keys, string>>;
  /** Input fields read from the query string although the rest come in the body (`POST /feeds?verify=false`). */
  query?: readonly Keys[];
  /** Response headers worth documenting. */
  responseHeaders?: Record<string, string>;
  /**
   * The success body's media type when it is not `application/json`: a string (the output schema
   * is one) is sent as it is, anything else as JSON (`application/feed+json`).
   */
  contentType?: string;
  /**
   * Credentials are also taken from the query string (`agent_id` and `api_key`, or a peer's
   * `mesh_token` where the operation takes mesh tokens), for clients that
   * can only be given a URL: feed readers and peers (CONTRACT §2.2). Those parameters are not
   * input, and no log, link or error ever carries them.
   */
  queryCredentials?: true;
  /**
   * The text body (the input field with a `contentMediaType`) is kept in a temporary file as it
   * arrives and handed to the handler as a LineSource, so it may be of any size: each line, not
   * the whole, is held to MAX_BODY_BYTES. Other text bodies are read whole, within MAX_BODY_BYTES.
   */
  spooledBody?: true;
}

/** The query parameters that carry credentials on routes with `queryCredentials`. */
export const QUERY_CREDENTIALS = { agentId: "agent_id", apiKey: "api_key", meshToken: "mesh_token" } as const;

type Output<O extends z.ZodType | undefined> = O extends z.ZodType ? z.input<O> : void;

type HandlerResult<K extends OperationKind, O extends z.ZodType | undefined> = K extends "list"
  ? Page<Output<O>>
  : K extends "stream"
    ? StreamSource
    : Output<O> | Reply<Output<O>>;

export interface OperationSpec<
  N extends string,
  I extends z.ZodObject,
  O extends z.ZodType | undefined,
  K extends OperationKind,
  A extends Access,
  R = HandlerResult<K, O>,
> {
  /** snake_case `<primitive>_<verb>`: the MCP tool name and the OpenAPI operationId. */
  name: N;
  /** One line, shown as the OpenAPI summary. */
  title: string;
  /** What it does, when to use it, what it returns: written for agents and humans. */
  description: string;
  kind: K;
  /**
   * It destroys what its caller cannot get back (sources merged away, a key replaced) though its
   * kind is not `delete`, so MCP hosts must not be told it only adds. Every `delete` is destructive.
   */
  destructive?: true;
  /** Who may call it: an agent (the default), anyone registering a client, or anyone. */
  access?: A;
  /** Offered over REST only, with no MCP tool: what only a machine reads (a peer's merkle summary). */
  restOnly?: true;
  /** Roles allowed to call it; default every role (viewers only for read and list kinds). */
  roles?: readonly Role[];
  /**
   * A peer's mesh token is accepted here when it holds one of these capabilities (CONTRACT §16);
   * everywhere else it is refused (403). The operation then sees a caller with `mesh` set.
   */
  mesh?: readonly MeshCapability[];
  http: HttpBinding<Extract<keyof z.input<I>, string>>;
  input: I;
  /** The success body (the item schema for list and stream kinds); absent for 204 responses. */
  output: O;
  /** Failure codes worth documenting beyond the common ones. */
  errors?: ErrorCode[];
  /**
   * Does the work. What it returns should be what the operation's last transaction returned (the
   * service's answer built inside it): an `Idempotency-Key`'s answer is then computed and stored
   * by that very transaction, so a crash leaves either no change or the change with its answer.
   */
  handle(context: ContextFor<A>, input: z.output<I>): Promise<R> | R;
  /**
   * Turns what `handle` returned into the reply, when they differ (a status chosen by the result, a
   * form the input asked for). Pure: it may run inside a transaction.
   */
  respond?(result: R, input: z.output<I>): HandlerResult<K, O>;
}

/** What running an operation produced, before any transport shapes it. */
export interface Outcome {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** For list kinds: the cursor of the next page, or null on the last one. */
  nextCursor?: string | null;
}

/** An outcome with the value `handle` returned, which `outcomeOf` turned into it. */
export interface Ran extends Outcome {
  result: unknown;
}

export interface Operation {
  name: string;
  title: string;
  description: string;
  kind: OperationKind;
  destructive: boolean;
  access: Access;
  restOnly: boolean;
  roles: readonly Role[] | undefined;
  mesh: readonly MeshCapability[] | undefined;
  http: HttpBinding<string> & { status: number };
  input: z.ZodObject;
  output: z.ZodType | undefined;
  errors: ErrorCode[];
  run(context: AgentContext | AnonymousContext, input: unknown): Promise<Ran>;
  /** The outcome of what `handle` returned for `input` (pure: the idempotency guard computes a reply with it inside a transaction). */
  outcomeOf(result: unknown, input: unknown): Outcome;
}

/**
 * An operation that keeps its name, kind and schemas as types: the catalogue's name → operation map
 * (`tools/catalogue.ts`) and the typed client (`src/client/operations.ts`) are read from them.
 */
export type TypedOperation<N extends string, I extends z.ZodObject, O extends z.ZodType | undefined, K extends OperationKind> = Omit<Operation, "name" | "kind" | "input" | "output"> & {
  readonly name: N;
  readonly kind: K;
  readonly input: I;
  readonly output: O;
};

const defaultStatus: Record<OperationKind, number> = { read: 200, list: 200, create: 201, update: 200, delete: 204, action: 200, stream: 200 };

export function defineOperation<N extends string, I extends z.ZodObject, O extends z.ZodType | undefined, K extends OperationKind, A extends Access = "agent">(
  spec: OperationSpec<N, I, O, K, A> & { respond?: never },
): TypedOperation<N, I, O, K>;
export function defineOperation<N extends string, I extends z.ZodObject, O extends z.ZodType | undefined, K extends OperationKind, R, A extends Access = "agent">(
  spec: OperationSpec<N, I, O, K, A, R> & { respond(result: R, input: z.output<I>): HandlerResult<K, O> },
): TypedOperation<N, I, O, K>;
export function defineOperation<N extends string, I extends z.ZodObject, O extends z.ZodType | undefined, K extends OperationKind, A extends Access, R>(
  spec: OperationSpec<N, I, O, K, A, R>,
): TypedOperation<N, I, O, K> {
  const status = spec.http.status ?? (spec.output === undefined ? 204 : defaultStatus[spec.kind]);
  const outcomeOf = (value: unknown, input: unknown): Outcome => {
    const answer: unknown = spec.respond ? spec.respond(value as R, input as z.output<I>) : value;
    if (spec.kind === "list") {
      const page = answer as Page<unknown>;
      return { status, body: page.items, headers: {}, nextCursor: page.nextCursor };
    }
    if (answer instanceof Reply) return { status: answer.status ?? status, body: answer.body, headers: answer.headers };
    return { status, body: answer, headers: {} };
  };
  const operation: TypedOperation<N, I, O, K> = {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    kind: spec.kind,
    destructive: spec.destructive ?? spec.kind === "delete",
    access: spec.access ?? "agent",
    restOnly: spec.restOnly ?? false,
    roles: spec.roles,
    mesh: spec.mesh,
    http: { ...spec.http, status },
    input: spec.input,
    output: spec.output,
    errors: spec.errors ?? [],
    async run(context, input) {
      const result: unknown = await spec.handle(context as ContextFor<A>, input as z.output<I>);
      return { ...outcomeOf(result, input), result };
    },
    outcomeOf,
  };
  return operation;
}

/** A field left out says so, not "expected string, received undefined"; a schema's own message still wins. */
const missingField = (issue: z.core.$ZodRawIssue): string | undefined =>
  issue.code === "invalid_type" && issue.input === undefined ? `required (${issue.expected})` : undefined;

/** Validates raw input once, at the edge; failures become 422 with a path per problem, or a value's own refusal. */
export function parseInput(operation: Operation, raw: unknown): unknown {
  refuseNul(raw);
  const parsed = operation.input.safeParse(raw, { error: missingField });
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error.issues, [], operation.input);
}

/**
 * U+0000 is refused in every string of every input, keys included: PostgreSQL cannot store it in
 * text, and a store that takes it on SQLite could never move to PostgreSQL. Refused the same on
 * both, so an agent learns it at its first write.
 */
interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function refuseNul(input: unknown): void {
  // A loop, not recursion, each path built only when it is reported: the walk costs one visit per
  // value however the input nests.
  const pending: Visit[] = [{ value: input, key: null, parent: null }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const { value } = visit;
    if (typeof value === "string") {
      if (value.includes("\u0000")) throw invalidFields([{ path: pathOf(visit), message: "contains a NUL character (U+0000)" }]);
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push({ value: item, key: String(index), parent: visit }));
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) pending.push({ value: key, key: null, parent: visit }, { value: item, key, parent: visit });
    }
  }
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at !== null; at = at.parent) if (at.key !== null) keys.push(at.key);
  return keys.reverse().join(".");
}
