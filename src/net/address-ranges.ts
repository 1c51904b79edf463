import ipaddr from "ipaddr.js";
import type { IpAddress } from "./host-literal.js";

/** What an address is, as far as the outbound rules care. Anything but `public` is refused by default. */
export const addressKinds = [
  "public",
  "loopback",
  "private",
  "cgnat",
  "link-local",
  "documentation",
  "benchmarking",
  "reserved",
  "unspecified",
  "multicast",
  "broadcast",
] as const;
export type AddressKind = (typeof addressKinds)[number];

/** How an IPv6 address carries an IPv4 one that a gateway or the kernel would deliver to. */
type Embedding = "ipv4-mapped" | "ipv4-translated" | "nat64" | "6to4" | "teredo";

export interface AddressClass {
  kind: AddressKind;
  /** The address as checked, in canonical form. */
  address: string;
  /** Set when the kind is that of an IPv4 address carried inside an IPv6 one. */
  embedded?: { form: Embedding; ipv4: string };
}

type Range = readonly [cidr: string, kind: AddressKind];

// First match wins, so the narrower range comes first where ranges nest.
const IPV4_RANGES: readonly Range[] = [
  // "This network": connecting to 0.0.0.0 reaches the local host on Linux.
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "cgnat"],
  ["127.0.0.0/8", "loopback"],
  // Cloud metadata services (169.254.169.254) live here.
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved"],
  ["192.0.2.0/24", "documentation"],
  // The deprecated 6to4 relay anycast (RFC 7526).
  ["192.88.99.0/24", "reserved"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "benchmarking"],
  ["198.51.100.0/24", "documentation"],
  ["203.0.113.0/24", "documentation"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "broadcast"],
  ["240.0.0.0/4", "reserved"],
];

const IPV6_RANGES: readonly Range[] = [
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  // IPv4-compatible addresses (RFC 4291 deprecated them): no host has one, whatever IPv4 they spell.
  ["::/96", "reserved"],
  // Local-use NAT64 (RFC 8215) translates into the site's own network.
  ["64:ff9b:1::/48", "private"],
  ["100::/64", "reserved"],
  ["2001:db8::/32", "documentation"],
  ["2001:2::/48", "benchmarking"],
  // IETF protocol assignments (ORCHID, AMT, AS112…): no web or mesh server lives there.
  ["2001::/23", "reserved"],
  ["3fff::/20", "documentation"],
  ["5f00::/16", "reserved"],
  ["fc00::/7", "private"],
  ["fe80::/10", "link-local"],
  // Site-local (RFC 3879 deprecated it), still routed inside some sites.
  ["fec0::/10", "private"],
  ["ff00::/8", "multicast"],
];

const ipv4Ranges = IPV4_RANGES.map(([cidr, kind]) => ({ range: ipaddr.IPv4.parseCIDR(cidr), kind }));
const ipv6Ranges = IPV6_RANGES.map(([cidr, kind]) => ({ range: ipaddr.IPv6.parseCIDR(cidr), kind }));
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");

// Forms whose last 32 bits (or, for 6to4, bits 16–47) are an IPv4 address that traffic ends up at.
const EMBEDDINGS: readonly { cidr: [ipaddr.IPv6, number]; form: Exclude<Embedding, "teredo"> }[] = [
  { cidr: ipaddr.IPv6.parseCIDR("::ffff:0:0/96"), form: "ipv4-mapped" },
  { cidr: ipaddr.IPv6.parseCIDR("::ffff:0:0:0/96"), form: "ipv4-translated" },
  { cidr: ipaddr.IPv6.parseCIDR("64:ff9b::/96"), form: "nat64" },
  { cidr: ipaddr.IPv6.parseCIDR("2002::/16"), form: "6to4" },
];
const TEREDO = ipaddr.IPv6.parseCIDR("2001::/32");

const ipv4Of = (high: number, low: number): ipaddr.IPv4 => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);

function classifyIpv4(address: ipaddr.IPv4): AddressKind {
  return ipv4Ranges.find(({ range }) => address.match(range))?.kind ?? "public";
}

/** The IPv4 addresses an IPv6 address hands traffic to, if it is one of the translation forms. */
function embeddedIpv4(address: ipaddr.IPv6): { form: Embedding; ipv4: ipaddr.IPv4[] } | null {
  const parts = address.parts;
  for (const { cidr, form } of EMBEDDINGS) {
    if (!address.match(cidr)) continue;
    const ipv4 = form === "6to4" ? ipv4Of(parts[1] ?? 0, parts[2] ?? 0) : ipv4Of(parts[6] ?? 0, parts[7] ?? 0);
    return { form, ipv4: [ipv4] };
  }
  if (address.match(TEREDO)) {
    // RFC 4380: the Teredo server's address in bits 32–63, the client's (inverted) in the last 32.
    const server = ipv4Of(parts[2] ?? 0, parts[3] ?? 0);
    const client = ipv4Of((parts[6] ?? 0) ^ 0xffff, (parts[7] ?? 0) ^ 0xffff);
    return { form: "teredo", ipv4: [client, server] };
  }
  return null;
}

/**
 * Classifies an address. An IPv6 form that carries an IPv4 address (mapped, translated, NAT64,
 * 6to4, Teredo) takes the kind of the IPv4 address (for Teredo, the first of its two that is not
 * public), since that is where the packets go. Outside those forms, IPv6 is public only inside
 * global unicast (2000::/3) and outside the special ranges in it.
 */
export function classifyAddress(address: IpAddress): AddressClass {
  const text = address.toString();
  if (address.kind() === "ipv4") return { kind: classifyIpv4(address as ipaddr.IPv4), address: text };
  const ipv6 = address as ipaddr.IPv6;
  const carried = embeddedIpv4(ipv6);
  if (carried) {
    const kinds = carried.ipv4.map((ipv4) => ({ ipv4, kind: classifyIpv4(ipv4) }));
    const decisive = kinds.find(({ kind }) => kind !== "public") ?? kinds[0];
    if (decisive) return { kind: decisive.kind, address: text, embedded: { form: carried.form, ipv4: decisive.ipv4.toString() } };
  }
  const special = ipv6Ranges.find(({ range }) => ipv6.match(range));
  if (special) return { kind: special.kind, address: text };
  return { kind: ipv6.match(GLOBAL_UNICAST) ? "public" : "reserved", address: text };
}

/** `::ffff:7f00:1 (IPv4-mapped 127.0.0.1)`: the address, and the IPv4 one that decided its kind. */
export const describeAddress = (found: AddressClass): string =>
  found.embedded ? `${found.address} (${found.embedded.form} ${found.embedded.ipv4})` : found.address;
