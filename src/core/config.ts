import { isIP } from "node:net";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { z } from "zod";
import { roles, type Role } from "../wire/roles.js";
import { AGENT_ID_PATTERN } from "../wire/ids.js";
import { expandHome, MCP_TOOLSETS } from "./setting-rules.js";

/** Where the archives of downloadable embedding models are published (fastembed's host). */
export const DEFAULT_MODEL_BASE_URL = "https://storage.googleapis.com/qdrant-fastembed";

/** A DNS name, an IPv4 address or a bracketed IPv6 address, as it appears in a `Host` header. */
export const HOST_NAME = /^(\[[0-9a-f:.]+\]|[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*)$/;

interface StaticAgent {
  agentId: string;
  key: string;
  role: Role;
}

/** Raised when a setting is invalid; the message names the setting. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const ratio = z.coerce.number().min(0).max(1);
const onOff = z.enum(["on", "off"]);
const agentId = z.string().regex(AGENT_ID_PATTERN, "must match ^[a-z0-9][a-z0-9_-]{0,63}$");

const agentKeys = z.string().transform((raw, ctx): StaticAgent[] => {
  const agents: StaticAgent[] = [];
  for (const item of raw.split(",").map((part) => part.trim()).filter(Boolean)) {
    const [id, key, role = "agent", ...rest] = item.split(":");
    const parsedRole = z.enum(roles).safeParse(role);
    if (!id || !key || rest.length > 0 || !AGENT_ID_PATTERN.test(id) || !parsedRole.success) {
      ctx.addIssue({ code: "custom", message: "each item must be id:key[:role] with a valid id and role" });
      return z.NEVER;
    }
    if (key.length < 16) {
      ctx.addIssue({ code: "custom", message: `the key for ${id} must be at least 16 characters` });
      return z.NEVER;
    }
    if (agents.some((agent) => agent.agentId === id)) {
      ctx.addIssue({ code: "custom", message: `${id} is listed twice` });
      return z.NEVER;
    }
    agents.push({ agentId: id, key, role: parsedRole.data });
  }
  return agents;
});

const idList = z.string().transform((raw, ctx) => {
  const ids = raw.split(",").map((part) => part.trim()).filter(Boolean);
  for (const id of ids) {
    if (!AGENT_ID_PATTERN.test(id)) {
      ctx.addIssue({ code: "custom", message: `${id} is not a valid agent id` });
      return z.NEVER;
    }
  }
  return ids;
});

/** `ALLOWED_HOSTS`: host names (or IP literals) a request's `Host` may carry besides loopback and PUBLIC_URL's. */
const hostList = z.string().transform((raw, ctx) => {
  const hosts = raw.split(",").map((part) => part.trim().toLowerCase().replace(/\.$/, "")).filter(Boolean);
  for (const host of hosts) {
    if (!HOST_NAME.test(host)) {
      ctx.addIssue({ code: "custom", message: `${host} is not a host name (give names or IP addresses, without scheme or port)` });
      return z.NEVER;
    }
  }
  return hosts;
});

/** `true` or `false`, for settings the contract names that way. */
const trueFalse = z.enum(["true", "false"], { error: "must be true or false" }).transform((value) => value === "true");

/**
 * `OUTBOUND_ALLOWLIST`: host names, IP addresses and CIDR ranges (`10.1.0.0/16`, `fd00::/8`).
 * Checked here only for shape, with node's strict address syntax (no `0x7f.1` spellings in a
 * setting); src/net/ parses the ranges.
 */
const outboundAllowlist = z.string().transform((raw, ctx) => {
  const items = raw.split(",").map((part) => part.trim().toLowerCase().replace(/\.+$/, "").replace(/^\[(.*)\]$/, "$1")).filter(Boolean);
  for (const item of items) {
    const [address = "", prefix, ...rest] = item.split("/");
    const family = isIP(address);
    const width = family === 4 ? 32 : 128;
    // A name whose last label is a number would be read as an address by a URL (`127.1`): only strict addresses here.
    const name = HOST_NAME.test(item) && !/(^|\.)(\d+|0x[0-9a-f]*)$/.test(item);
    const valid = prefix === undefined ? family !== 0 || name : family !== 0 && rest.length === 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= width;
    if (!valid) {
      ctx.addIssue({ code: "custom", message: `${item} is not a host name, an IP address or a CIDR range` });
      return z.NEVER;
    }
  }
  return items;
});

const url = z.url({ protocol: /^https?$/ }).transform((value) => value.replace(/\/+$/, ""));

/** The fused-score floor below which a search hit is dropped, chosen on the retrieval benchmark (docs/search.md). */
export const DEFAULT_SEARCH_MIN_SCORE = 0.09;

export const INSTANCE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

const settingsSchema = z.object({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: int(0, 65535).default(8470),
  DATA_DIR: z.string().min(1).optional(),
  /** Unset: SQLite in DATA_DIR. `postgres://…`: PostgreSQL (with pgvector), which several servers may share. */
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: "must be a postgres:// or postgresql:// URL" })
    .optional(),
  PUBLIC_URL: url.optional(),
  /** How this server names itself to peers and feed readers; default: the host name as a slug. */
  INSTANCE_NAME: z.string().regex(INSTANCE_NAME_PATTERN, "must match ^[a-z0-9][a-z0-9-]{0,62}$").optional(),
  AGENT_KEYS: agentKeys.default([]),
  REGISTRATION_KEY: z.string().default(""),
  /** Dynamic OAuth client registration (CONTRACT §19): `open`, `key` (needs REGISTRATION_KEY) or `off`. */
  OAUTH_REGISTRATION: z.enum(["open", "key", "off"]).default("open"),
  UI_AGENT_ID: agentId.default("human"),
  UI_PASSWORD: z.string().default(""),
  ARCHIVIST_AGENT_ID: agentId.default("archivist"),
  ARCHIVIST: onOff.default("on"),
  DIRECTIVE_WRITERS: idList.optional(),
  DIRECTIVE_CONFLICT_THRESHOLD: ratio.default(0.85),
  DIRECTIVE_STALENESS_AGENT_DAYS: int(1, 3650).default(30),
  DIRECTIVE_STALENESS_AGE_DAYS: int(1, 3650).default(90),
  DIRECTIVE_STALENESS_COOLDOWN_HOURS: int(1, 87600).default(168),
  EMBEDDING_MODEL: z.enum(["use-lite", "bge-small-en-v1.5", "custom", "hash"]).default("use-lite"),
  EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  /** Where `bge-small-en-v1.5` is downloaded from on first use (a mirror, for machines that cannot reach the default). */
  EMBEDDING_MODEL_URL: url.default(DEFAULT_MODEL_BASE_URL),
  DUPLICATE_THRESHOLD: ratio.default(0.95),
  SIMILAR_THRESHOLD: ratio.default(0.75),
  MAX_CONTENT_BYTES: int(1, 16 * 1024 * 1024).default(65536),
  MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(1048576),
  TASK_LEASE_SECONDS: int(0, 365 * 86400).default(7200),
  EVENT_RETENTION_DAYS: int(1, 3650).default(30),
  CAPTURE_MAX_BYTES: int(1024, 1048576).default(65536),
  CAPTURE_MAX_ATTEMPTS: int(1, 20).default(3),
  CAPTURE_RETENTION_HOURS: int(0, 720).default(24),
  AUDIT_LOG: onOff.default("on"),
  AUDIT_COMMIT_SECONDS: int(1, 86400).default(300),
  RATE_LIMIT_PER_MINUTE: int(0, 1_000_000).default(600),
  /** Compile units an agent may write (create or rewrite) per hour; 0: no limit. */
  COMPILE_UNITS_PER_HOUR: int(0, 100_000_000).default(20_000),
  /** Bytes of compiled entries an agent may write per hour; 0: no limit. */
  COMPILE_BYTES_PER_HOUR: int(0, 1024 ** 4).default(32 * 1024 * 1024),
  /** An agent's entries waiting for a vector at which its bulk writes are refused; 0: no limit. */
  EMBEDDING_BACKLOG_PER_AGENT: int(0, 100_000_000).default(5_000),
  /** Live entries a project (or global memory) may hold; 0: no limit. */
  MAX_ENTRIES_PER_PROJECT: int(0, 1_000_000_000).default(100_000),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  CAIRN_URL: url.default("http://127.0.0.1:8470"),
  CAIRN_AGENT_ID: agentId.optional(),
  CAIRN_API_KEY: z.string().min(1).optional(),
  /** A file holding the agent's key (what onboarding writes), read when CAIRN_API_KEY is not set. */
  CAIRN_KEY_FILE: z.string().min(1).optional(),
  ARCHIVIST_LLM_PROVIDER: z.enum(["none", "openai", "anthropic"]).default("none"),
  ARCHIVIST_LLM_BASE_URL: url.optional(),
  ARCHIVIST_LLM_MODEL: z.string().min(1).optional(),
  ARCHIVIST_LLM_API_KEY: z.string().min(1).optional(),
  ARCHIVIST_LLM_TIMEOUT_SECONDS: int(1, 600).default(60),
  ARCHIVIST_LEASE_SECONDS: int(10, 3600).default(120),
  ARCHIVIST_HOLDER: z.string().trim().min(1).max(200).optional(),
  SYNTHESIS_INTERVAL_SECONDS: int(10, 7 * 86400).default(3600),
  CONFLICT_THRESHOLD: ratio.default(0.92),
  DECAY_RATE: ratio.default(0.9),
  DECAY_FLOOR: ratio.default(0.05),
  DECAY_WINDOW_DAYS: int(1, 3650).default(7),
  PROMOTION_MIN_CONFIDENCE: ratio.default(0.6),
  PROMOTION_MIN_READERS: int(1, 1000).default(2),
  PROMOTION_MIN_REINFORCEMENTS: int(1, 1000).default(3),
  PROMOTION_STABLE_DAYS: int(0, 3650).default(7),
  ARCHIVIST_TOKEN_BUDGET_PER_HOUR: int(0, 100_000_000).default(200000),
  MCP_TOOLSET: z.enum(MCP_TOOLSETS).default("standard"),
  ALLOWED_HOSTS: hostList.default([]),
  /** The cosine at which a search hit's semantic half starts to count; unset: the embedder's measured default. */
  SEARCH_MIN_SIMILARITY: ratio.optional(),
  /** Search hits whose fused score (0..1) is below this are dropped. */
  SEARCH_MIN_SCORE: ratio.default(DEFAULT_SEARCH_MIN_SCORE),
  /** SQLite: from this many embeddings on, an HNSW index beside the database answers vector search (docs/architecture.md, "Search at scale"). */
  VECTOR_ANN_THRESHOLD: int(1, 1_000_000_000).default(150_000),
  /** Feed polling may reach loopback, private and CGNAT addresses (never link-local, multicast or unspecified). */
  FEEDS_ALLOW_PRIVATE: trueFalse.default(false),
  /** Mesh sync may reach loopback, private and CGNAT addresses (never link-local, multicast or unspecified). */
  MESH_ALLOW_PRIVATE: trueFalse.default(true),
  /** Hosts and ranges every outbound call may reach whatever they are (except unspecified, multicast, broadcast). */
  OUTBOUND_ALLOWLIST: outboundAllowlist.default([]),
  /** How often each server looks for feed subscriptions due a poll, in seconds. */
  FEEDS_POLL_SECONDS: int(1, 60).default(5),
  /** Advertise and browse `_cairn._tcp` on the local network (refused while HOST is loopback). */
  MESH_MDNS: onOff.default("off"),
  /** How often each link's merkle summaries are compared with the peer's (hours). */
  MESH_ANTI_ENTROPY_HOURS: int(1, 168).default(6),
  /** How often each server looks for mesh links due a sync, in seconds. */
  MESH_SYNC_TICK_SECONDS: int(1, 60).default(5),
  /** How often the linked peers are asked whom they know (gossip adds suggestions only), in seconds. */
  MESH_GOSSIP_SECONDS: int(1, 86400).default(300),
  /** A bearer token that may read /metrics besides the owner role; empty: owner only. */
  METRICS_TOKEN: z.string().default(""),
});

type Settings = z.output<typeof settingsSchema>;

export interface Config extends Omit<Settings, "DATA_DIR" | "PUBLIC_URL" | "DIRECTIVE_WRITERS" | "INSTANCE_NAME"> {
  DATA_DIR: string;
  INSTANCE_NAME: string;
  PUBLIC_URL: string;
  DIRECTIVE_WRITERS: string[];
  /** True when HOST is a loopback address; gates open self-registration. */
  hostIsLoopback: boolean;
  /** False when PUBLIC_URL was derived from HOST and PORT (and so follows the port actually bound). */
  publicUrlExplicit: boolean;
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}

/** `0.0.0.0` and `::` are binds to every interface, not addresses a client can be sent to. */
export const isUnspecifiedHost = (host: string): boolean => ["0.0.0.0", "::", "[::]"].includes(host);

/**
 * The host a derived URL names: HOST itself, or for a bind to every interface this machine's host
 * name (the server answers to it as PUBLIC_URL's host), or loopback when that name is unusable.
 */
export function urlHostFor(host: string): string {
  if (isUnspecifiedHost(host)) {
    const machine = hostname().toLowerCase().replace(/\.$/, "");
    return HOST_NAME.test(machine) ? machine : "127.0.0.1";
  }
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** A host name as an instance name: lower case, runs of anything else as one dash, at most 63 characters. */
export function hostSlug(host: string): string {
  const slug = host.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "").slice(0, 63).replace(/-+$/, "");
  return INSTANCE_NAME_PATTERN.test(slug) ? slug : "cairn";
}

/** Parses the process environment once; throws ConfigError naming the first bad setting. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.keys(settingsSchema.shape);
  // An empty variable means "not set", so `FOO= cairn serve` falls back to the default.
  const input = Object.fromEntries(
    known.flatMap((key) => {
      const value = env[key];
      return value === undefined || value.trim() === "" ? [] : [[key, value.trim()]];
    }),
  );
  const parsed = settingsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const setting = String(issue?.path[0] ?? "settings");
    throw new ConfigError(`invalid setting ${setting}: ${issue?.message ?? "invalid value"}`);
  }
  const settings = parsed.data;
  if (settings.EMBEDDING_MODEL === "custom" && !settings.EMBEDDING_MODEL_DIR) {
    throw new ConfigError("invalid setting EMBEDDING_MODEL_DIR: required when EMBEDDING_MODEL=custom");
  }
  if (settings.MAX_CONTENT_BYTES > settings.MAX_BODY_BYTES) {
    throw new ConfigError("invalid setting MAX_CONTENT_BYTES: must not exceed MAX_BODY_BYTES");
  }
  // Advertising a loopback address tells the network nothing it could use (CONTRACT §16).
  if (settings.MESH_MDNS === "on" && isLoopbackHost(settings.HOST)) {
    throw new ConfigError("invalid setting MESH_MDNS: refused while HOST is loopback; bind HOST to a network address first");
  }
  if (settings.UI_AGENT_ID === settings.ARCHIVIST_AGENT_ID) {
    throw new ConfigError("invalid setting ARCHIVIST_AGENT_ID: must differ from UI_AGENT_ID");
  }
  // The archivist can never write a directive: the rule lives in configuration, so no code path
  // needs a special case for it.
  if (settings.DIRECTIVE_WRITERS?.includes(settings.ARCHIVIST_AGENT_ID)) {
    throw new ConfigError("invalid setting DIRECTIVE_WRITERS: must not name ARCHIVIST_AGENT_ID; the archivist never writes directives");
  }
  return {
    ...settings,
    DATA_DIR: resolve(expandHome(settings.DATA_DIR ?? "~/.cairn")),
    PUBLIC_URL: settings.PUBLIC_URL ?? `http://${urlHostFor(settings.HOST)}:${settings.PORT}`,
    INSTANCE_NAME: settings.INSTANCE_NAME ?? hostSlug(hostname()),
    DIRECTIVE_WRITERS: settings.DIRECTIVE_WRITERS ?? [settings.UI_AGENT_ID],
    EMBEDDING_MODEL_DIR:
      settings.EMBEDDING_MODEL_DIR === undefined ? undefined : resolve(expandHome(settings.EMBEDDING_MODEL_DIR)),
    hostIsLoopback: isLoopbackHost(settings.HOST),
    publicUrlExplicit: settings.PUBLIC_URL !== undefined,
  };
}
