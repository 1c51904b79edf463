import { existsSync, readFileSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ApiError, apiErrorOf, fetchSend, OperationClient } from "../client/operations.js";
import type { Config } from "../core/config.js";
import { credentialsPath } from "../core/paths.js";
import { UsageError } from "./output.js";
import { commandServer } from "./pidfile.js";

/** Who an operator command (`cairn export`, `import`, `search`, `agent list`) acts as, and where. */
export interface OwnerIdentity {
  url: string;
  agentId: string;
  apiKey: string;
}

/**
 * CAIRN_AGENT_ID with CAIRN_API_KEY when both are set; otherwise the owner (UI_AGENT_ID) whose key
 * the server wrote to DATA_DIR/credentials.json. These commands go through the running server
 * (`commandServer`), never the database file: its rules, events and embedding model apply, with
 * any store behind it.
 */
export function ownerIdentity(config: Config): OwnerIdentity {
  const { url } = commandServer(config);
  if (config.CAIRN_AGENT_ID && config.CAIRN_API_KEY) return { url, agentId: config.CAIRN_AGENT_ID, apiKey: config.CAIRN_API_KEY };
  const file = credentialsPath(config.DATA_DIR);
  let key: unknown;
  if (existsSync(file)) {
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as { agents?: Record<string, { api_key?: unknown }> };
      key = parsed.agents?.[config.UI_AGENT_ID]?.api_key;
    } catch {
      throw new UsageError(`cannot read ${file}`);
    }
  }
  if (typeof key !== "string" || key === "") {
    throw new UsageError(`no key for the owner ${config.UI_AGENT_ID} in ${file}; set CAIRN_AGENT_ID and CAIRN_API_KEY to an owner's id and key`);
  }
  return { url, agentId: config.UI_AGENT_ID, apiKey: key };
}

/** A refusal from the server, with its status, said in one line. */
class ServerRefusal extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`${detail} (${status})`);
    this.name = "ServerRefusal";
  }
}

/** A refusal's detail, with each field's problem when the server lists them (a 422). */
function refusalText(error: ApiError): string {
  const listed: unknown = error.body.errors;
  const fields = (Array.isArray(listed) ? (listed as unknown[]) : []).flatMap((problem) =>
    typeof problem === "object" && problem !== null && "path" in problem && "message" in problem ? [`${String(problem.path)}: ${String(problem.message)}`] : [],
  );
  return fields.length > 0 ? `${error.detail}: ${fields.join("; ")}` : error.detail;
}

/** Requests to the server as one identity; a server that does not answer is said plainly. */
export class OwnerClient {
  /** Operations by name (src/client), as this identity; a refusal is a ServerRefusal. */
  readonly operations: OperationClient;

  constructor(readonly identity: OwnerIdentity) {
    const send = fetchSend(identity.url);
    this.operations = new OperationClient(async (request) => {
      try {
        return await send({ ...request, headers: { ...request.headers, ...this.credentials() } });
      } catch (error) {
        if (error instanceof ApiError) throw new ServerRefusal(error.status, refusalText(error));
        throw this.unreachable();
      }
    });
  }

  private credentials(): Record<string, string> {
    return { "x-agent-id": this.identity.agentId, "x-api-key": this.identity.apiKey };
  }

  private unreachable(): Error {
    return new Error(`no Cairn server answers at ${this.identity.url}: start one with \`cairn serve\`, or set CAIRN_URL`);
  }

  async request(path: string, init: { method?: string; body?: string; contentType?: string } = {}): Promise<Response> {
    const headers = this.credentials();
    if (init.contentType) headers["content-type"] = init.contentType;
    try {
      return await fetch(`${this.identity.url}${path}`, { method: init.method ?? "GET", headers, ...(init.body === undefined ? {} : { body: init.body }) });
    } catch {
      throw this.unreachable();
    }
  }

  /**
   * POSTs a body of any size as it is produced, and answers once the server has. On node:http
   * rather than fetch: an import's answer may take longer than fetch waits for one (5 minutes).
   */
  async upload(path: string, body: AsyncIterable<string>, contentType: string): Promise<Response> {
    const url = new URL(`${this.identity.url}${path}`);
    const headers = { ...this.credentials(), "content-type": contentType };
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, { method: "POST", headers });
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      request.once("response", resolve);
      request.once("error", reject);
    });
    // A server that answers before the body's end (a refusal) stops reading it: that is its answer, not a failure.
    const sent = pipeline(Readable.from(body), request).catch(() => undefined);
    let response: IncomingMessage;
    try {
      response = await answered;
    } catch {
      throw this.unreachable();
    }
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    await sent;
    const answer = new Headers();
    for (const [name, value] of Object.entries(response.headers)) if (typeof value === "string") answer.set(name, value);
    return new Response(Buffer.concat(chunks), { status: response.statusCode ?? 500, headers: answer });
  }

  /** Throws the server's refusal for a response that is not a success. */
  async check(response: Response): Promise<Response> {
    if (response.ok) return response;
    const refusal = apiErrorOf(response.status, (await response.text()).trim(), null);
    throw new ServerRefusal(response.status, refusalText(refusal) || response.statusText);
  }
}
