import ipaddr from "ipaddr.js";

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** A URL's host as the fetcher reads it: an address it will connect to itself, or a name it resolves. */
export type ParsedHost =
  | { type: "address"; address: IpAddress }
  | { type: "name"; name: string }
  | { type: "invalid"; reason: string };

const DECIMAL = /^[0-9]+$/;
const OCTAL = /^0[0-7]+$/;
const HEX = /^0x[0-9a-f]*$/;

/** One part of a numeric IPv4 spelling, as `inet_aton` and the WHATWG URL parser read it: `0x…` hex, `0…` octal, else decimal. */
function ipv4Part(part: string): bigint | null {
  if (HEX.test(part)) return part.length === 2 ? 0n : BigInt(part);
  if (OCTAL.test(part)) return BigInt(`0o${part.slice(1)}`);
  if (part.startsWith("0") && part.length > 1) return null;
  return DECIMAL.test(part) ? BigInt(part) : null;
}

/**
 * `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`: one to four numbers, every one but the last a
 * byte, the last filling the bytes left. The WHATWG parser already rewrites these inside
 * `new URL()`, but the fetcher reads hosts itself so that what it checks never depends on who
 * parsed the URL before it.
 */
function parseIpv4(host: string): ipaddr.IPv4 | null {
  const parts = host.split(".");
  if (parts.length > 4) return null;
  const numbers = parts.map(ipv4Part);
  if (numbers.some((value) => value === null)) return null;
  const values = numbers as bigint[];
  const last = values[values.length - 1] as bigint;
  const leading = values.slice(0, -1);
  if (leading.some((value) => value > 255n)) return null;
  if (last >= 256n ** BigInt(5 - values.length)) return null;
  let whole = leading.reduce((sum, value, index) => sum + (value << BigInt(8 * (3 - index))), 0n) + last;
  const bytes: number[] = [];
  for (let index = 0; index < 4; index++) {
    bytes.unshift(Number(whole & 255n));
    whole >>= 8n;
  }
  return new ipaddr.IPv4(bytes);
}

const STRICT_IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * IPv6, with a trailing dotted IPv4 read strictly (as `inet_pton` does) and put in its place
 * bit for bit: ipaddr.js reads `::127.0.0.1` as the IPv4-mapped `::ffff:7f00:1`, where the
 * address is the IPv4-compatible `::7f00:1`, and takes `::0127.0.0.1` that `inet_pton` refuses.
 */
function parseIpv6(text: string): ipaddr.IPv6 | null {
  const [body = "", zone] = text.split("%", 2);
  let hex = body;
  if (body.includes(".")) {
    const cut = body.lastIndexOf(":");
    const ipv4 = body.slice(cut + 1);
    if (!STRICT_IPV4.test(ipv4)) return null;
    const [a = 0, b = 0, c = 0, d = 0] = ipv4.split(".").map(Number);
    hex = `${body.slice(0, cut + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const spelled = zone === undefined ? hex : `${hex}%${zone}`;
  return ipaddr.IPv6.isValid(spelled) ? ipaddr.IPv6.parse(spelled) : null;
}

/**
 * Reads a host as an address or a name. A host whose last label is a number (decimal or `0x…`)
 * is an IPv4 address or nothing — the URL standard's rule, and what `getaddrinfo` would make of it
 * — so `127.1` and `0x7f.1` never reach a resolver as names. Trailing dots are ignored for that
 * test (`127.0.0.1.` and `127.0.0.1..` are loopback, not names); brackets or a colon mean IPv6,
 * whatever form it takes (`::ffff:127.0.0.1`, a zone id).
 */
export function parseHost(raw: string): ParsedHost {
  const host = raw.toLowerCase();
  if (host.startsWith("[") || host.includes(":")) {
    const address = parseIpv6(host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);
    return address ? { type: "address", address } : { type: "invalid", reason: `${raw} is not an IPv6 address` };
  }
  const bare = host.replace(/\.+$/, "");
  if (bare === "") return { type: "invalid", reason: "the host is empty" };
  const lastLabel = bare.slice(bare.lastIndexOf(".") + 1);
  if (!DECIMAL.test(lastLabel) && !HEX.test(lastLabel)) return { type: "name", name: bare };
  const address = parseIpv4(bare);
  return address ? { type: "address", address } : { type: "invalid", reason: `${raw} ends in a number but is not an IPv4 address` };
}

