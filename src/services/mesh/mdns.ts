import type { EventEmitter } from "node:events";
import { isIPv4 } from "node:net";
import Bonjour from "bonjour-service";
import type { Logger } from "../../core/log.js";
import type { DiscoveredPeers } from "./discovered.js";
import { peerOfTxt, txtOf, type AdvertisedPeer } from "./mdns-txt.js";

/** `_cairn._tcp` (CONTRACT §16). */
const SERVICE_TYPE = "cairn";
/** How often browsing starts over: a new browse hears every peer again, so `last_seen_at` stays current. */
const ROUND_MS = 300_000;
/** Services heard per round at most; past it the round stops listening, so a flood costs bounded writes and memory. */
const MAX_SIGHTINGS_PER_ROUND = 500;
/** How long closing waits for the goodbye packets and the socket. */
const CLOSE_WAIT_MS = 2_000;

export interface MdnsOptions {
  /** HOST: advertise and browse on the interface that holds it, when it is one IPv4 address. */
  host: string;
  roundMs?: number;
}

/**
 * multicast-dns's settings: on HOST's interface when HOST is one IPv4 address (where the server
 * answers), else every interface. Bound to the wildcard address all the same: on Linux a socket
 * bound to a unicast address never receives multicast.
 */
function socketOptions(host: string): Record<string, unknown> {
  return isIPv4(host) && host !== "0.0.0.0" ? { interface: host, bind: "0.0.0.0" } : {};
}

/** Resolves when `done` does, or after `ms` (a send that never completes must not hold up shutdown). */
function within(ms: number, done: (finish: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    done(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Advertises this instance as `_cairn._tcp` with TXT `id`, `name`, `url`, and records every other
 * Cairn heard on the local network as a discovered peer (via "mdns"). Started once the server
 * listens, when MESH_MDNS is on; config refuses that while HOST is loopback.
 */
export class MdnsDiscovery {
  private bonjour: Bonjour | null = null;
  private browser: Bonjour.Browser | null = null;
  private round: NodeJS.Timeout | null = null;
  private sightings = 0;
  private selfId = "";
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly discovered: DiscoveredPeers,
    private readonly log: Logger,
    private readonly options: MdnsOptions,
  ) {}

  start(self: AdvertisedPeer, port: number): void {
    if (this.bonjour !== null) return;
    this.selfId = self.instance_id;
    const bonjour = new Bonjour(socketOptions(this.options.host), (error: unknown) => this.log.warn("mDNS send failed", { error }));
    // bonjour-service leaves its socket's "error" (port 5353 refused) unheard, and an unheard
    // "error" ends the process: mDNS is a convenience, never worth the server.
    const socket = (bonjour as unknown as { server: { mdns: EventEmitter } }).server.mdns;
    let unavailable = false;
    socket.on("error", (error: unknown) => {
      // A failed bind is reported twice (by the socket and by the bind); once says it.
      if (!unavailable) this.log.warn("mDNS unavailable: not advertised, nothing discovered", { error });
      unavailable = true;
    });
    this.bonjour = bonjour;

    const txt = txtOf(self);
    if (txt === null) {
      this.log.warn("not advertised on mDNS: the public URL does not fit a TXT record (http(s), no query, at most 251 characters)", { url: self.url });
    } else {
      // Not probed: the name carries the instance id, so only another server of this same instance
      // could hold it, and bonjour-service reports a clash on the console.
      bonjour.publish({ name: `${self.name.slice(0, 54)}-${self.instance_id.slice(0, 8)}`, type: SERVICE_TYPE, port, txt, probe: false });
    }
    this.browse();
    this.round = setInterval(() => this.browse(), this.options.roundMs ?? ROUND_MS);
    this.round.unref();
  }

  private browse(): void {
    this.browser?.stop();
    this.sightings = 0;
    if (this.bonjour === null) return;
    const browser = this.bonjour.find({ type: SERVICE_TYPE });
    browser.on("up", (service) => this.sighted(service));
    // A renamed or moved peer re-announces with a new TXT record.
    browser.on("txt-update", (service) => this.sighted(service));
    this.browser = browser;
  }

  private sighted(service: Bonjour.Service): void {
    if (++this.sightings > MAX_SIGHTINGS_PER_ROUND) {
      this.browser?.stop();
      this.log.warn("mDNS: too many services this round; listening again next round", { limit: MAX_SIGHTINGS_PER_ROUND });
      return;
    }
    const peer = peerOfTxt(service.txt);
    if (peer === null) {
      this.log.debug("mDNS: ignored a _cairn._tcp service with an invalid TXT record", { name: service.name });
      return;
    }
    if (peer.instance_id === this.selfId) return;
    const write: Promise<void> = this.discovered
      .record(peer, "mdns")
      .then(() => undefined)
      .catch((error: unknown) => this.log.warn("mDNS: could not record a discovered peer", { error }))
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }

  /** Says goodbye (TTL 0, so peers forget this instance at once), closes the socket, lets pending writes finish. */
  async stop(): Promise<void> {
    if (this.round !== null) clearInterval(this.round);
    this.browser?.stop();
    const bonjour = this.bonjour;
    this.bonjour = null;
    if (bonjour !== null) {
      await within(CLOSE_WAIT_MS, (finish) => bonjour.unpublishAll(finish));
      await within(CLOSE_WAIT_MS, (finish) => bonjour.destroy(finish));
    }
    await Promise.all([...this.writes]);
  }
}
