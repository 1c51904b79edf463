import type { Logger } from "../src/core/log.js";
import type { ArchivistLease } from "../src/wire/archivist.js";
import type { InputOf } from "../src/client/operations.js";
import type { CairnClient } from "./client.js";

export interface LeaseEvents {
  acquired(token: number): void;
  lost(): void;
}

/**
 * Holds the singleton lease: renews it every third of its TTL while held, and while another holds
 * it tries again when that holder's lease would run out, so a dead holder is replaced within one
 * TTL. The archivist works only between `acquired` and `lost`.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private heldToken: number | null = null;
  /** Local time after which an unrenewed lease must be treated as gone. */
  private heldUntil = 0;
  private stopped = false;

  constructor(
    private readonly client: CairnClient,
    private readonly holder: string,
    private readonly ttlSeconds: number,
    private readonly log: Logger,
    private readonly events: LeaseEvents,
  ) {}

  get token(): number | null {
    return this.heldToken;
  }

  start(): void {
    this.stopped = false;
    void this.attempt();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.attempt(), Math.max(50, ms));
  }

  private async attempt(): Promise<void> {
    this.timer = null;
    const renewEvery = (this.ttlSeconds * 1000) / 3;
    let answer: ArchivistLease;
    try {
      answer = await this.request({ holder: this.holder, ttl_seconds: this.ttlSeconds });
    } catch (error) {
      this.log.warn("lease request failed", { error });
      if (this.heldToken !== null && Date.now() >= this.heldUntil) this.lose();
      this.schedule(Math.min(renewEvery, 2000));
      return;
    }
    if (this.stopped) return;
    if (answer.granted) {
      // A margin under the server's expiry: stop working before a successor may start.
      this.heldUntil = Date.now() + this.ttlSeconds * 1000 - Math.min(2000, renewEvery / 2);
      if (this.heldToken !== answer.token) {
        if (this.heldToken !== null) this.lose();
        this.heldToken = answer.token;
        this.log.info("lease acquired", { holder: this.holder, lease: answer.token });
        this.events.acquired(answer.token);
      }
      this.schedule(renewEvery);
      return;
    }
    if (this.heldToken !== null) this.lose();
    const untilExpiry = answer.expires_at === null ? 0 : Date.parse(answer.expires_at) - Date.now() + 50;
    this.schedule(Math.min(Math.max(untilExpiry, 250), this.ttlSeconds * 1000));
  }

  // Lease requests carry no fencing token: a holder that lost the lease must hear so, not a 409.
  private async request(body: InputOf<"archivist_lease">): Promise<ArchivistLease> {
    return this.client.call("archivist_lease", body, { unfenced: true });
  }

  private lose(): void {
    if (!this.stopped) this.log.warn("lease lost", { holder: this.holder });
    this.heldToken = null;
    this.events.lost();
  }

  /** Stops renewing; with `release`, gives the lease up so a successor need not wait out the TTL. */
  async stop(release: boolean): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const held = this.heldToken !== null;
    if (held) this.lose();
    if (held && release) {
      await this.request({ holder: this.holder, ttl_seconds: this.ttlSeconds, release: true }).catch((error: unknown) => {
        this.log.warn("lease release failed", { error });
      });
    }
  }
}
