import ipaddr from "ipaddr.js";
import type { Config } from "../core/config.js";
import { classifyAddress, describeAddress, type AddressClass, type AddressKind } from "./address-ranges.js";
import type { IpAddress } from "./host-literal.js";

/**
 * Why a call is made, which decides what it may reach. `feeds`: a URL any agent gave (private
 * refused unless FEEDS_ALLOW_PRIVATE). `mesh`: a peer the owner linked (private allowed unless
 * MESH_ALLOW_PRIVATE=false). `operator`: a URL from the server's own settings, such as
 * EMBEDDING_MODEL_URL (private allowed). `clients`: an OAuth client's metadata document, named by
 * whoever asks to authorize (private refused; only OUTBOUND_ALLOWLIST relaxes it).
 */
export type OutboundPolicy = "feeds" | "mesh" | "operator" | "clients";

/** The three settings that relax the rules. */
export interface OutboundSettings {
  feedsAllowPrivate: boolean;
  meshAllowPrivate: boolean;
  /** Host names, addresses and CIDR ranges, as OUTBOUND_ALLOWLIST gives them. */
  allowlist: readonly string[];
}

export const defaultOutboundSettings: OutboundSettings = { feedsAllowPrivate: false, meshAllowPrivate: true, allowlist: [] };

export const outboundSettingsOf = (config: Pick<Config, "FEEDS_ALLOW_PRIVATE" | "MESH_ALLOW_PRIVATE" | "OUTBOUND_ALLOWLIST">): OutboundSettings => ({
  feedsAllowPrivate: config.FEEDS_ALLOW_PRIVATE,
  meshAllowPrivate: config.MESH_ALLOW_PRIVATE,
  allowlist: config.OUTBOUND_ALLOWLIST,
});

/** Refused whatever the settings: nothing is listening at these, or everything is. */
const NEVER: ReadonlySet<AddressKind> = new Set(["unspecified", "multicast", "broadcast"]);
/** What "private" means in FEEDS_ALLOW_PRIVATE and MESH_ALLOW_PRIVATE. Link-local is not in it: cloud metadata lives there. */
const PRIVATE: ReadonlySet<AddressKind> = new Set(["loopback", "private", "cgnat"]);

export interface AddressRules {
  policy: OutboundPolicy;
  allowPrivate: boolean;
  names: ReadonlySet<string>;
  ranges: readonly [IpAddress, number][];
}

/** The rules one call is checked by: its policy's setting plus the allowlist. */
export function addressRules(policy: OutboundPolicy, settings: OutboundSettings = defaultOutboundSettings): AddressRules {
  const names = new Set<string>();
  const ranges: [IpAddress, number][] = [];
  for (const item of settings.allowlist) {
    if (item.includes("/")) ranges.push(ipaddr.parseCIDR(item));
    else if (ipaddr.isValid(item)) {
      const address = ipaddr.parse(item);
      ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
    } else names.add(item.toLowerCase().replace(/\.+$/, ""));
  }
  const allowPrivate = policy === "operator" || (policy === "feeds" ? settings.feedsAllowPrivate : policy === "mesh" ? settings.meshAllowPrivate : false);
  return { policy, allowPrivate, names, ranges };
}

export type AddressVerdict =
  | (AddressClass & { allowed: true; by: "public" | "policy" | "allowlist" })
  | (AddressClass & {
      allowed: false;
      /** `127.0.0.1, a loopback address` */
      described: string;
      /** What would let it through, or "" when nothing can. */
      relaxedBy: string;
    });

const inRange = (address: IpAddress, [base, bits]: [IpAddress, number]): boolean =>
  address.kind() === base.kind() && address.match(base, bits);

/** Whether the allowlist names the address, or the IPv4 address it carries. */
function allowlisted(found: AddressClass, address: IpAddress, rules: AddressRules): boolean {
  const carried = found.embedded ? ipaddr.IPv4.parse(found.embedded.ipv4) : null;
  return rules.ranges.some((range) => inRange(address, range) || (carried !== null && inRange(carried, range)));
}

const ARTICLE: Record<AddressKind, string> = {
  public: "a public",
  loopback: "a loopback",
  private: "a private",
  cgnat: "a carrier-grade NAT",
  "link-local": "a link-local",
  documentation: "a documentation",
  benchmarking: "a benchmarking",
  reserved: "a reserved",
  unspecified: "an unspecified",
  multicast: "a multicast",
  broadcast: "the broadcast",
};

/** What would let this kind through under this policy. */
function relaxedBy(kind: AddressKind, policy: OutboundPolicy): string {
  if (NEVER.has(kind)) return "";
  if (PRIVATE.has(kind) && (policy === "feeds" || policy === "mesh")) return `${policy === "feeds" ? "FEEDS_ALLOW_PRIVATE=true" : "MESH_ALLOW_PRIVATE=true"} or OUTBOUND_ALLOWLIST`;
  return "OUTBOUND_ALLOWLIST";
}

const refused = (found: AddressClass, policy: OutboundPolicy): AddressVerdict => ({
  ...found,
  allowed: false,
  described: `${describeAddress(found)}, ${ARTICLE[found.kind]} address`,
  relaxedBy: relaxedBy(found.kind, policy),
});

/** `<subject> <address>, a loopback address (FEEDS_ALLOW_PRIVATE=true or OUTBOUND_ALLOWLIST would allow it)` */
export function refusalReason(verdict: Extract<AddressVerdict, { allowed: false }>, subject: string): string {
  return `${subject} ${verdict.described}${verdict.relaxedBy === "" ? ", never allowed" : ` (${verdict.relaxedBy} would allow it)`}`;
}

/**
 * Judges one address a call would connect to. `hostName` is the URL's host when it is a name:
 * a name on the allowlist lets all its addresses through (but never unspecified, multicast or
 * broadcast ones).
 */
export function judgeAddress(address: IpAddress, rules: AddressRules, hostName?: string): AddressVerdict {
  const found = classifyAddress(address);
  if (NEVER.has(found.kind)) return refused(found, rules.policy);
  if (found.kind === "public") return { ...found, allowed: true, by: "public" };
  if (PRIVATE.has(found.kind) && rules.allowPrivate) return { ...found, allowed: true, by: "policy" };
  if ((hostName !== undefined && rules.names.has(hostName)) || allowlisted(found, address, rules)) return { ...found, allowed: true, by: "allowlist" };
  return refused(found, rules.policy);
}
