import { z } from "zod";
import { AppError, invalid } from "../../core/errors.js";
import { OutboundFailure, OutboundRefusal } from "../../net/errors.js";
import type { OutboundFetcher } from "../../net/fetch.js";
import { safeUrl } from "../../net/safe-url.js";
import { projectMapping, type MeshHandshakeResult, type ProjectMapping } from "../../wire/mesh.js";

/**
 * How one call to a peer went wrong. `rejected`: it answered 401 or 403 (the token, or what the
 * token may do). `refused`: our outbound rules stopped the call before it was sent. `failed`: no
 * whole answer came back. `status`: another non-2xx answer. `answer`: a 2xx that is not what a Cairn
 * says. The message names the peer by `safeUrl` and never quotes its body.
 */
export type PeerFailure = "rejected" | "refused" | "failed" | "status" | "answer";

export class PeerCallError extends Error {
  constructor(
    readonly failure: PeerFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "PeerCallError";
  }

  /** The request's answer when this failure is not one a caller names itself: 422 for a refused URL, 502 otherwise. */
  toAppError(): AppError {
    if (this.failure === "refused") return invalid("url", `url not allowed: ${this.message}`, `url not allowed: ${this.message}`);
    return new AppError("UPSTREAM_ERROR", this.message);
  }
}

/** A peer's base URL as links store it: http(s), no userinfo, query or fragment, no trailing slash (422 otherwise). */
export function normalizePeerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("url", "must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid("url", "must be an http or https URL");
  if (url.username !== "" || url.password !== "") throw invalid("url", "must not carry a user name or password");
  if (url.search !== "" || url.hash !== "" || raw.includes("?") || raw.includes("#")) throw invalid("url", "must not carry a query or fragment");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

const peerRef = z.object({ instance_id: z.string().min(1).max(100), name: z.string().min(1).max(100), url: z.string().min(1).max(2048) });
export type PeerRef = z.output<typeof peerRef>;

/** A gossip answer as read from a peer: bounded, and its peers checked one by one where they are used. */
const gossipAnswer = z.object({
  instance_id: z.string().min(1).max(100),
  name: z.string().min(1).max(100),
  url: z.string().max(2048),
  version: z.string().max(64),
  peers: z.array(z.unknown()).max(1000),
  grant: z
    .object({ projects: z.array(z.string().max(64)).max(1000), include_global: z.boolean() })
    .nullable()
    .optional(),
});
export type PeerGossip = Omit<z.output<typeof gossipAnswer>, "peers"> & { peers: PeerRef[] };

const handshakeAnswer = z.object({
  instance_id: z.string().min(1).max(100),
  name: z.string().min(1).max(100),
  link_id: z.string().max(100),
  projects: z.array(projectMapping).max(1000),
  created: z.boolean(),
});

export interface HandshakeRequest {
  instance_id: string;
  name: string;
  url: string;
  token: string;
  /** From the answering side's view: `local` its project, `remote` ours. */
  projects: ProjectMapping[];
}

/**
 * The mesh's calls to a peer's own routes (gossip, handshake), through the one outbound fetcher
 * under the `mesh` policy: bearer token, JSON both ways, the body capped at MAX_BODY_BYTES.
 */
export class PeerClient {
  constructor(
    private readonly outbound: OutboundFetcher,
    private readonly maxBodyBytes: number,
  ) {}

  /** `GET {base}/mesh/gossip` with `token`: who the peer is, whom it knows, what the token grants. */
  async gossip(base: string, token: string): Promise<PeerGossip> {
    const answer = await this.call(`${base}/mesh/gossip`, token, gossipAnswer);
    const peers = answer.peers.flatMap((entry) => {
      const parsed = peerRef.safeParse(entry);
      return parsed.success ? [parsed.data] : [];
    });
    return { ...answer, peers };
  }

  /** `POST {base}/mesh/handshake` bearing `bearer`: asks the peer to pull from us with `request.token`. */
  handshake(base: string, bearer: string, request: HandshakeRequest): Promise<MeshHandshakeResult> {
    return this.call(`${base}/mesh/handshake`, bearer, handshakeAnswer, JSON.stringify(request));
  }

  private async call<T>(url: string, token: string, schema: z.ZodType<T>, body?: string): Promise<T> {
    const shown = safeUrl(url);
    let response;
    try {
      response = await this.outbound.request(url, {
        policy: "mesh",
        maxBodyBytes: this.maxBodyBytes,
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${token}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body }),
      });
    } catch (error) {
      if (error instanceof OutboundRefusal) throw new PeerCallError("refused", error.target === undefined ? error.reason : `it redirects to ${error.target}; ${error.reason}`);
      if (error instanceof OutboundFailure) throw new PeerCallError("failed", error.message);
      throw error;
    }
    if (response.status === 401 || response.status === 403) throw new PeerCallError("rejected", `peer ${shown} answered HTTP ${response.status}`, response.status);
    if (response.status < 200 || response.status > 299) throw new PeerCallError("status", `peer ${shown} answered HTTP ${response.status}`, response.status);
    let json: unknown;
    try {
      json = JSON.parse(response.body.toString("utf8"));
    } catch {
      throw new PeerCallError("answer", `peer ${shown} did not answer with JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new PeerCallError("answer", `peer ${shown} did not answer as a Cairn instance`);
    return parsed.data;
  }
}
