import { randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { Config } from "../../core/config.js";
import { AppError } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { invalidClient, OAuthError } from "../../core/oauth-error.js";
import { now } from "../../core/time.js";
import type { ClientRow } from "../../store/oauth.js";
import type { Store } from "../../store/store.js";
import { hashKey, keyMatches } from "../credentials.js";
import type { RateLimiter } from "../rate-limit.js";
import { clientKey, REGISTRATION_IDENTITY, type FailureThrottle } from "../throttle.js";
import { isMetadataDocumentUrl, MetadataDocumentError, type MetadataDocuments } from "./metadata-documents.js";
import { MAX_REDIRECT_URI_LENGTH, redirectUriRefusal } from "./redirect-uris.js";

type AuthMethod = "none" | "client_secret_basic" | "client_secret_post";
const AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;

/** Registered clients kept at most; a new registration makes room by dropping the oldest that never got a grant. */
const MAX_CLIENTS = 10_000;
const MAX_REDIRECT_URIS = 10;
/** Registrations one address may make in a minute. */
export const REGISTRATIONS_PER_MINUTE = 20;
/** A registration never used for an authorization expires after this long… */
const NEVER_USED_CLIENT_MS = 24 * 3600_000;
/** …and one used, this long after its last use (a live refresh token keeps it whatever its age). */
const UNUSED_CLIENT_MS = 30 * 86400_000;
/** A client's last use is written at most this often. */
export const CLIENT_TOUCH_INTERVAL_MS = 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A client as the flow sees it: registered here, or described by its metadata document. */
export interface ClientInfo {
  clientId: string;
  name: string;
  redirectUris: string[];
  authMethod: AuthMethod;
  secretHash: Buffer | null;
  /** For a metadata-document client: the document's host, shown on the consent page. */
  documentHost: string | null;
}

const text = (max: number) => z.string().max(max);
/** RFC 7591 §2, as far as Cairn keeps it; other fields are ignored. Each value is bounded. */
const registrationSchema = z.looseObject({
  redirect_uris: z.array(z.unknown()).min(1).max(MAX_REDIRECT_URIS),
  token_endpoint_auth_method: z.enum(AUTH_METHODS).optional(),
  grant_types: z.array(text(100)).max(10).optional(),
  response_types: z.array(text(100)).max(10).optional(),
  client_name: text(200).optional(),
  client_uri: text(MAX_REDIRECT_URI_LENGTH).optional(),
  logo_uri: text(MAX_REDIRECT_URI_LENGTH).optional(),
  tos_uri: text(MAX_REDIRECT_URI_LENGTH).optional(),
  policy_uri: text(MAX_REDIRECT_URI_LENGTH).optional(),
  scope: text(500).optional(),
  contacts: z.array(text(200)).max(5).optional(),
  software_id: text(200).optional(),
  software_version: text(200).optional(),
  application_type: z.unknown().optional(),
});

/** Fields echoed back as registered (RFC 7591 §3.2.1), besides the ones the flow uses. */
const ECHOED = ["client_uri", "logo_uri", "tos_uri", "policy_uri", "scope", "contacts", "software_id", "software_version"] as const;

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at?: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: AuthMethod;
  grant_types: string[];
  response_types: string[];
  [field: string]: unknown;
}

const invalidMetadata = (description: string): OAuthError => new OAuthError("invalid_client_metadata", description);

/**
 * OAuth clients (CONTRACT §19): dynamic registration (RFC 7591) with each redirect URI judged on
 * its own, client metadata documents, and client authentication at the token endpoint.
 */
export class OAuthClients {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly throttle: FailureThrottle,
    private readonly registrations: RateLimiter,
    private readonly documents: MetadataDocuments,
  ) {}

  /**
   * Registers a client. `presentedKey`: the registration key, when OAUTH_REGISTRATION is `key`.
   * Redirect URIs are judged one by one: those refused are left out of the registration (its answer
   * lists what was kept), and only a registration with none left is refused.
   */
  async register(body: unknown, presentedKey: string | undefined, address: string | undefined): Promise<RegisteredClient> {
    const mode = this.config.OAUTH_REGISTRATION;
    if (mode === "off") throw new OAuthError("access_denied", "dynamic client registration is off on this server", 403);
    if (mode === "key") await this.checkRegistrationKey(presentedKey, address);
    try {
      await this.registrations.take(`oauth-register ${clientKey(address)}`);
    } catch (error) {
      if (error instanceof AppError && error.code === "RATE_LIMITED") throw new OAuthError("temporarily_unavailable", "too many registrations from this address; try again later", 429);
      throw error;
    }
    const parsed = registrationSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.join(".") || "body";
      throw field.startsWith("redirect_uris") ? new OAuthError("invalid_redirect_uri", `redirect_uris: ${issue?.message ?? "invalid"}`) : invalidMetadata(`${field}: ${issue?.message ?? "invalid"}`);
    }
    const request = parsed.data;
    const redirectUris = [...new Set(request.redirect_uris.filter((uri): uri is string => typeof uri === "string" && redirectUriRefusal(uri) === null))];
    if (redirectUris.length === 0) {
      const first = request.redirect_uris[0];
      const reason = typeof first === "string" ? redirectUriRefusal(first) : "must be a string";
      throw new OAuthError("invalid_redirect_uri", `no acceptable redirect URI (the first ${reason ?? "is refused"})`);
    }
    // RFC 7591 §2: a client that names no method authenticates with HTTP Basic.
    const authMethod: AuthMethod = request.token_endpoint_auth_method ?? "client_secret_basic";
    const secret = authMethod === "none" ? null : `cairn_cs_${randomBytes(32).toString("base64url")}`;
    const clientId = newId();
    const at = now();
    const name = request.client_name?.trim() || "unnamed client";
    const metadata: Record<string, unknown> = {};
    for (const field of ECHOED) if (request[field] !== undefined) metadata[field] = request[field];
    // Any application type is taken (CONTRACT §19): only the two RFC 7591 names are kept.
    if (request.application_type === "web" || request.application_type === "native") metadata.application_type = request.application_type;
    const row: ClientRow = {
      client_id: clientId,
      secret_hash: secret === null ? null : hashKey(secret),
      auth_method: authMethod,
      client_name: name,
      redirect_uris: JSON.stringify(redirectUris),
      metadata: JSON.stringify(metadata),
      created_at: at,
      last_used_at: null,
    };
    await this.store.transaction(async (tx) => {
      await tx.lock("oauth-clients");
      if ((await this.store.oauth.countClients(tx)) >= MAX_CLIENTS && !(await this.store.oauth.evictUnusedClient(tx))) {
        throw new OAuthError("temporarily_unavailable", `this server holds ${MAX_CLIENTS} clients with grants; revoke some first`, 503);
      }
      await this.store.oauth.insertClient(tx, row);
    });
    return {
      client_id: clientId,
      ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      client_id_issued_at: Math.floor(Date.parse(at) / 1000),
      client_name: name,
      redirect_uris: redirectUris,
      token_endpoint_auth_method: authMethod,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...metadata,
    };
  }

  private checkRegistrationKey(presented: string | undefined, address: string | undefined): Promise<void> {
    if (!this.config.REGISTRATION_KEY) return Promise.reject(new OAuthError("access_denied", "client registration needs a registration key, and none is configured", 403));
    return this.throttle
      .guard(address, REGISTRATION_IDENTITY, () => {
        if (presented === undefined || !keyMatches(presented, hashKey(this.config.REGISTRATION_KEY))) throw new AppError("UNAUTHENTICATED", "invalid registration key");
      })
      .catch((error: unknown) => {
        if (error instanceof AppError && error.code === "UNAUTHENTICATED") throw new OAuthError("invalid_token", "a valid registration key is required (Authorization: Bearer, or X-Registration-Key)", 401);
        if (error instanceof AppError && error.code === "RATE_LIMITED") throw new OAuthError("temporarily_unavailable", error.detail, 429);
        throw error;
      });
  }

  /**
   * The client named by `clientId`: registered and not expired, or a metadata document that can be
   * fetched and used. Otherwise `invalid_client` (401) with the reason.
   */
  async resolve(clientId: string, address: string | undefined): Promise<ClientInfo> {
    if (isMetadataDocumentUrl(clientId)) {
      try {
        const document = await this.documents.get(clientId, address);
        return { clientId, name: document.clientName, redirectUris: document.redirectUris, authMethod: "none", secretHash: null, documentHost: document.host };
      } catch (error) {
        if (error instanceof MetadataDocumentError) throw invalidClient(error.message);
        throw error;
      }
    }
    const row = UUID.test(clientId) ? await this.store.oauth.client(this.store.reader, clientId) : undefined;
    if (!row || (await this.expired(row))) throw invalidClient("unknown or expired client: register again");
    return {
      clientId,
      name: row.client_name,
      redirectUris: JSON.parse(row.redirect_uris) as string[],
      authMethod: row.auth_method as AuthMethod,
      secretHash: row.secret_hash,
      documentHost: null,
    };
  }

  private async expired(row: ClientRow, nowMs = Date.now()): Promise<boolean> {
    const timedOut = row.last_used_at === null ? nowMs - Date.parse(row.created_at) > NEVER_USED_CLIENT_MS : nowMs - Date.parse(row.last_used_at) > UNUSED_CLIENT_MS;
    // Never while it holds a live refresh token (its last use is written at most every minute).
    return timedOut && !(await this.store.oauth.hasLiveRefresh(this.store.reader, row.client_id, new Date(nowMs).toISOString()));
  }

  /**
   * The client of a token or revocation request, authenticated by its registered method: a public
   * client by its id alone, a confidential one by its secret in HTTP Basic or the body (either is
   * taken). Failures are throttled per address and client like any credential.
   */
  async authenticate(clientId: string, secret: string | undefined, address: string | undefined): Promise<ClientInfo> {
    if (!UUID.test(clientId) && !isMetadataDocumentUrl(clientId)) throw invalidClient();
    return this.throttle
      .guard(address, `oauth-client ${clientId}`, async () => {
        let client: ClientInfo;
        try {
          client = await this.resolve(clientId, address);
        } catch (error) {
          if (error instanceof OAuthError) throw new AppError("UNAUTHENTICATED", error.description);
          throw error;
        }
        if (client.authMethod !== "none") {
          const matches = secret !== undefined && client.secretHash !== null && timingSafeEqual(hashKey(secret), client.secretHash);
          if (!matches) throw new AppError("UNAUTHENTICATED", "wrong client secret");
        }
        return client;
      })
      .catch((error: unknown) => {
        if (error instanceof AppError && error.code === "UNAUTHENTICATED") throw invalidClient(error.detail === "wrong client secret" ? undefined : error.detail);
        if (error instanceof AppError && error.code === "RATE_LIMITED") throw new OAuthError("temporarily_unavailable", error.detail, 429);
        throw error;
      });
  }

  /** Records a use (an authorization or a token): what keeps a registration from expiring. */
  async touch(clientId: string): Promise<void> {
    if (!UUID.test(clientId)) return;
    const at = now();
    await this.store.transaction((tx) => this.store.oauth.touchClient(tx, clientId, at, new Date(Date.parse(at) - CLIENT_TOUCH_INTERVAL_MS).toISOString()));
  }

  /** Deletes expired registrations (their grants, dead by then, go with the grants' pruning); returns how many. */
  async pruneExpired(nowMs = Date.now()): Promise<number> {
    const at = new Date(nowMs).toISOString();
    const ids = await this.store.oauth.expiredClients(this.store.reader, new Date(nowMs - NEVER_USED_CLIENT_MS).toISOString(), new Date(nowMs - UNUSED_CLIENT_MS).toISOString(), at, 500);
    let removed = 0;
    for (const id of ids) removed += await this.store.transaction((tx) => this.store.oauth.deleteClient(tx, id));
    return removed;
  }
}
