import { randomBytes } from "node:crypto";
import { now } from "../core/time.js";
import type { Store } from "../store/store.js";
import type { AuthService } from "./auth.js";
import { hashKey } from "./credentials.js";
import type { RateLimiter } from "./rate-limit.js";

export const TOKEN_SECONDS = 3600;

export interface IssuedToken {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
}

/**
 * OAuth 2.1 client credentials: an agent's id and key buy a bearer token for an hour. Tokens are
 * opaque, stored as hashes, and die with the agent or with the key they were issued against.
 */
export class OAuthService {
  constructor(
    private readonly store: Store,
    private readonly auth: AuthService,
    private readonly rateLimiter: RateLimiter,
  ) {}

  /**
   * Throws UNAUTHENTICATED for a wrong pair (the route turns it into `invalid_client`); failures
   * count against the address and client id like a wrong API key, since the secret is the key.
   */
  async issue(clientId: string, clientSecret: string, address: string | undefined): Promise<IssuedToken> {
    const agent = await this.auth.verifyKey(clientId, clientSecret, address);
    // A token costs a write: issuing counts against the agent's rate limit like any request.
    await this.rateLimiter.take(agent.agent_id);
    const token = `cairn_at_${randomBytes(32).toString("base64url")}`;
    const issuedAt = now();
    await this.store.transaction((tx) =>
      this.store.oauth.insert(tx, {
        token_hash: hashKey(token),
        agent_id: agent.agent_id,
        key_hash: agent.key_hash,
        created_at: issuedAt,
        expires_at: new Date(Date.parse(issuedAt) + TOKEN_SECONDS * 1000).toISOString(),
      }),
    );
    return { access_token: token, token_type: "bearer", expires_in: TOKEN_SECONDS };
  }

  pruneExpired(): Promise<number> {
    return this.store.transaction((tx) => this.store.oauth.deleteExpired(tx, now()));
  }
}
