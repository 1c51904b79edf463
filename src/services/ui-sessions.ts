import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Config } from "../core/config.js";
import { AppError, invalidCredentials } from "../core/errors.js";
import { now } from "../core/time.js";
import type { Store, Tx } from "../store/store.js";
import type { Caller } from "./caller.js";
import { hashKey } from "./credentials.js";
import { UI_LINK_IDENTITY, UI_PASSWORD_IDENTITY, type FailureThrottle } from "./throttle.js";
import type { UiLogin } from "../wire/ui-session.js";

/** A session ends after this long without a request. */
const SESSION_IDLE_MS = 24 * 3600_000;
/** A login link works once, within this long of being issued. */
const LOGIN_LINK_TTL_MS = 24 * 3600_000;
// last_used_at is written at most this often per session, not on every request.
const TOUCH_INTERVAL_MS = 60_000;

const sessionToken = (): string => `cairn_ui_${randomBytes(32).toString("base64url")}`;

/** Constant-time equality of two secrets of any length (compared as hashes). */
const sameSecret = (a: string, b: string): boolean => timingSafeEqual(hashKey(a), hashKey(b));

/**
 * Web UI login: `UI_PASSWORD`, or a one-time link (printed by `cairn serve` at start when there is
 * no password, and by `cairn ui-link` at any time). Either buys a session for `UI_AGENT_ID` that
 * lasts while it is used (24 h idle). Only hashes of sessions and links are stored, in the
 * database, so a link minted by the CLI works on the running server.
 */
export class UiSessionService {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly throttle: FailureThrottle,
  ) {}

  get passwordLogin(): boolean {
    return this.config.UI_PASSWORD !== "";
  }

  /** A new one-time login token, live for LOGIN_LINK_TTL_MS. */
  async issueLoginLink(): Promise<{ token: string; expires_at: string }> {
    const token = `cairn_login_${randomBytes(24).toString("base64url")}`;
    const at = now();
    const expiresAt = new Date(Date.parse(at) + LOGIN_LINK_TTL_MS).toISOString();
    await this.store.transaction((tx) => this.store.uiSessions.insertLoginLink(tx, hashKey(token), at, expiresAt));
    return { token, expires_at: expiresAt };
  }

  /** Whether a link can still be used. */
  loginLinkIsLive(token: string): Promise<boolean> {
    return this.store.uiSessions.loginLinkIsLive(this.store.reader, hashKey(token), now());
  }

  /**
   * Failed attempts are throttled per address, the password and login links counted apart: a
   * guesser elsewhere never locks the password out, and nobody can use up the links' allowance
   * with wrong passwords.
   */
  async login(credentials: { password?: string | undefined; token?: string | undefined }, address: string | undefined): Promise<UiLogin> {
    const identity = credentials.password !== undefined ? UI_PASSWORD_IDENTITY : UI_LINK_IDENTITY;
    return this.throttle.guard(address, identity, () => this.tryLogin(credentials));
  }

  private async tryLogin(credentials: { password?: string | undefined; token?: string | undefined }): Promise<UiLogin> {
    const byPassword = credentials.password !== undefined && this.passwordLogin && sameSecret(credentials.password, this.config.UI_PASSWORD);
    const session = sessionToken();
    const at = now();
    const open = (tx: Tx): Promise<void> =>
      this.store.uiSessions.insert(tx, { token_hash: hashKey(session), agent_id: this.config.UI_AGENT_ID, created_at: at, last_used_at: at });
    // A link is looked up by its hash (no comparison of the secret leaks timing) and traded for the
    // session in one transaction, so it is never used up without one.
    const byToken =
      !byPassword &&
      credentials.token !== undefined &&
      (await this.store.transaction(async (tx) => {
        const taken = await this.store.uiSessions.takeLoginLink(tx, hashKey(credentials.token as string), at);
        if (taken) await open(tx);
        return taken;
      }));
    if (!byPassword && !byToken) {
      throw new AppError(
        "UNAUTHENTICATED",
        credentials.token !== undefined ? "this login link is not valid: a link works once, for 24 hours (`cairn ui-link` prints a new one)" : "wrong password",
      );
    }
    if (byPassword) await this.store.transaction(open);
    return { session, agent_id: this.config.UI_AGENT_ID, expires_at: new Date(Date.parse(at) + SESSION_IDLE_MS).toISOString() };
  }

  /** The UI agent for a live session; 401 otherwise. */
  async authenticate(session: string): Promise<Caller> {
    const hash = hashKey(session);
    const row = await this.store.uiSessions.byHash(this.store.reader, hash);
    const nowMs = Date.now();
    if (!row || nowMs - Date.parse(row.last_used_at) >= SESSION_IDLE_MS) throw invalidCredentials();
    if (nowMs - Date.parse(row.last_used_at) >= TOUCH_INTERVAL_MS) {
      await this.store.transaction((tx) => this.store.uiSessions.touch(tx, hash, new Date(nowMs).toISOString()));
    }
    return { agentId: row.agent_id, role: "owner" };
  }

  /** Ends a session; an unknown one is already ended. */
  async logout(session: string): Promise<void> {
    await this.store.transaction((tx) => this.store.uiSessions.delete(tx, hashKey(session)));
  }

  /** Ends idle sessions and drops expired login links. */
  pruneIdle(): Promise<number> {
    return this.store.transaction(
      async (tx) =>
        (await this.store.uiSessions.deleteIdle(tx, new Date(Date.now() - SESSION_IDLE_MS).toISOString())) +
        (await this.store.uiSessions.deleteExpiredLoginLinks(tx, now())),
    );
  }
}
