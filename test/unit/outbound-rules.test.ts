import { describe, expect, it } from "vitest";
import { upstreamError, OutboundFailure, OutboundRefusal } from "../../src/net/errors.js";
import { OutboundFetcher, type Resolver } from "../../src/net/fetch.js";
import { parseHost } from "../../src/net/host-literal.js";
import { addressRules, defaultOutboundSettings, judgeAddress, type OutboundPolicy, type OutboundSettings } from "../../src/net/policy.js";
import { safeUrl } from "../../src/net/safe-url.js";
import type { AddressKind } from "../../src/net/address-ranges.js";
import { HOST_CASES, INVALID_HOSTS, NAME_HOSTS } from "../fixtures/outbound-hosts.js";

/** The settings a column of the table runs under. */
interface Column {
  name: string;
  policy: OutboundPolicy;
  settings: Partial<OutboundSettings>;
  /** The allowlist names the address itself. */
  allowlisted?: boolean;
}

const COLUMNS: Column[] = [
  { name: "feeds", policy: "feeds", settings: {} },
  { name: "feeds, FEEDS_ALLOW_PRIVATE=true", policy: "feeds", settings: { feedsAllowPrivate: true } },
  { name: "mesh", policy: "mesh", settings: {} },
  { name: "mesh, MESH_ALLOW_PRIVATE=false", policy: "mesh", settings: { meshAllowPrivate: false } },
  { name: "operator", policy: "operator", settings: {} },
  { name: "feeds, address in OUTBOUND_ALLOWLIST", policy: "feeds", settings: {}, allowlisted: true },
  { name: "mesh, MESH_ALLOW_PRIVATE=false, address in OUTBOUND_ALLOWLIST", policy: "mesh", settings: { meshAllowPrivate: false }, allowlisted: true },
  { name: "clients", policy: "clients", settings: {} },
  { name: "clients, FEEDS_ALLOW_PRIVATE and MESH_ALLOW_PRIVATE true", policy: "clients", settings: { feedsAllowPrivate: true, meshAllowPrivate: true } },
  { name: "clients, address in OUTBOUND_ALLOWLIST", policy: "clients", settings: {}, allowlisted: true },
];

// The rules as a table, written out rather than derived from the code under test: one row per
// kind of address, one column per setting above (✓ allowed, · refused).
const ALLOWED: Record<AddressKind, string> = {
  public: "✓✓✓✓✓✓✓✓✓✓",
  loopback: "·✓✓·✓✓✓··✓",
  private: "·✓✓·✓✓✓··✓",
  cgnat: "·✓✓·✓✓✓··✓",
  "link-local": "·····✓✓··✓",
  documentation: "·····✓✓··✓",
  benchmarking: "·····✓✓··✓",
  reserved: "·····✓✓··✓",
  unspecified: "··········",
  multicast: "··········",
  broadcast: "··········",
};

const address = (host: string) => {
  const parsed = parseHost(host);
  if (parsed.type !== "address") throw new Error(`${host} is not an address`);
  return parsed.address;
};

describe("host spellings (read by the fetcher itself, not left to the URL parser or getaddrinfo)", () => {
  it.each(HOST_CASES)("reads $host as $address ($kind)", ({ host, address: expected, kind }) => {
    const parsed = address(host);
    expect(parsed.toString()).toBe(expected);
    expect(judgeAddress(parsed, addressRules("feeds")).kind).toBe(kind);
  });

  it.each(HOST_CASES)("reads $host the same after the WHATWG URL parser has rewritten it", ({ host, address: expected }) => {
    const hostname = new URL(`http://${host}:8080/feed`).hostname;
    expect(address(hostname).toString()).toBe(expected);
  });

  it.each(INVALID_HOSTS)("refuses %s as neither an address nor a name", (host) => {
    expect(parseHost(host).type).toBe("invalid");
  });

  it.each(NAME_HOSTS)("leaves %s to the resolver, as a name", (host) => {
    expect(parseHost(host)).toEqual({ type: "name", name: host.toLowerCase().replace(/\.+$/, "") });
  });
});

describe("the outbound address rules (CONTRACT §11), every kind under every policy and setting", () => {
  for (const [index, column] of COLUMNS.entries()) {
    it.each(HOST_CASES)(`${column.name}: $host ($kind)`, ({ host, kind }) => {
      const parsed = address(host);
      const settings = { ...defaultOutboundSettings, ...column.settings, allowlist: column.allowlisted ? [parsed.toString().replace(/%.*$/, "")] : [] };
      const verdict = judgeAddress(parsed, addressRules(column.policy, settings));
      expect(verdict.allowed).toBe(ALLOWED[kind][index] === "✓");
      expect(verdict.kind).toBe(kind);
      if (!verdict.allowed) expect(verdict.described).toContain(`${kind === "cgnat" ? "carrier-grade NAT" : kind} address`);
    });
  }

  it("says what would let a refused address through, and that nothing does for unspecified, multicast and broadcast", () => {
    const feeds = addressRules("feeds");
    const mesh = addressRules("mesh", { ...defaultOutboundSettings, meshAllowPrivate: false });
    const verdict = (host: string, rules = feeds) => {
      const found = judgeAddress(address(host), rules);
      return found.allowed ? "allowed" : found.relaxedBy;
    };
    expect(verdict("127.0.0.1")).toBe("FEEDS_ALLOW_PRIVATE=true or OUTBOUND_ALLOWLIST");
    expect(verdict("10.0.0.1", mesh)).toBe("MESH_ALLOW_PRIVATE=true or OUTBOUND_ALLOWLIST");
    // An OAuth client's metadata document: only the allowlist relaxes it.
    expect(verdict("127.0.0.1", addressRules("clients"))).toBe("OUTBOUND_ALLOWLIST");
    expect(verdict("169.254.169.254")).toBe("OUTBOUND_ALLOWLIST");
    expect(verdict("0.0.0.0")).toBe("");
    expect(verdict("224.0.0.1")).toBe("");
    expect(verdict("255.255.255.255")).toBe("");
  });

  it("lets CIDR ranges of the allowlist through, IPv4 and IPv6, and IPv4-mapped forms of allowlisted IPv4", () => {
    const rules = addressRules("feeds", { ...defaultOutboundSettings, allowlist: ["10.0.0.0/8", "fd00::/8", "127.0.0.1"] });
    const allowed = (host: string) => judgeAddress(address(host), rules).allowed;
    expect(allowed("10.200.3.4")).toBe(true);
    expect(allowed("[::ffff:10.200.3.4]")).toBe(true);
    expect(allowed("172.16.0.1")).toBe(false);
    expect(allowed("[fd12::1]")).toBe(true);
    expect(allowed("[fc00::1]")).toBe(false);
    expect(allowed("127.0.0.1")).toBe(true);
    expect(allowed("[::ffff:127.0.0.1]")).toBe(true);
    expect(allowed("127.0.0.2")).toBe(false);
  });

  it("lets every address of an allowlisted host name through, but never unspecified, multicast or broadcast ones", () => {
    const rules = addressRules("feeds", { ...defaultOutboundSettings, allowlist: ["feeds.lan"] });
    expect(judgeAddress(address("10.0.0.5"), rules, "feeds.lan")).toMatchObject({ allowed: true, by: "allowlist" });
    expect(judgeAddress(address("169.254.169.254"), rules, "feeds.lan").allowed).toBe(true);
    expect(judgeAddress(address("10.0.0.5"), rules, "other.lan").allowed).toBe(false);
    for (const host of ["0.0.0.0", "[::]", "224.0.0.1", "255.255.255.255"]) expect(judgeAddress(address(host), rules, "feeds.lan").allowed).toBe(false);
  });
});

/** A resolver that must never be asked: these URLs are refused before any name is looked up. */
const unreachable: Resolver = () => Promise.reject(new Error("the resolver was asked"));

async function refusal(url: string, options: { policy?: OutboundPolicy; settings?: Partial<OutboundSettings> } = {}): Promise<OutboundRefusal> {
  const fetcher = new OutboundFetcher({ settings: { ...defaultOutboundSettings, ...options.settings }, resolve: unreachable });
  const error: unknown = await fetcher.request(url, { policy: options.policy ?? "feeds", maxBodyBytes: 1024 }).catch((caught: unknown) => caught);
  if (!(error instanceof OutboundRefusal)) throw new Error(`expected a refusal of ${url}, got ${String(error)}`);
  return error;
}

describe("the URL checks, before anything is resolved or connected", () => {
  it.each(["file:///etc/passwd", "ftp://example.com/feed.xml", "gopher://example.com:70/_GET", "data:text/plain,hello", "javascript:alert(1)", "ws://example.com/", "dict://example.com:11211/stat"])(
    "refuses %s at the scheme step",
    async (url) => {
      expect(await refusal(url)).toMatchObject({ step: "scheme", rule: "scheme" });
    },
  );

  it.each(["http://user:secret-pw@example.com/feed", "https://user@example.com/feed", "http://:secret-pw@example.com/", "http://127.0.0.1:80@example.com/"])(
    "refuses %s at the userinfo step, naming the URL without it",
    async (url) => {
      const error = await refusal(url);
      expect(error).toMatchObject({ step: "userinfo", rule: "userinfo" });
      expect(error.message).not.toMatch(/secret-pw|user@|127\.0\.0\.1/);
    },
  );

  it.each(["not a url", "http://", "http://256.0.0.1/", "http://[::0127.0.0.1]/", "http://1.2.3.4.5/"])("refuses %s at the url step", async (url) => {
    expect(await refusal(url)).toMatchObject({ step: "url", rule: "url" });
  });

  it.each(HOST_CASES.filter(({ kind }) => kind !== "public"))("refuses http://$host/ under feeds at the address step, resolving nothing", async ({ host, kind }) => {
    expect(await refusal(`http://${host}/`)).toMatchObject({ step: "address", rule: "address", kind });
  });

  it("names the URL without its query, fragment or userinfo in every refusal", async () => {
    for (const url of ["http://127.0.0.1/feed?api_key=SECRET-1#SECRET-2", "gopher://127.0.0.1/?SECRET-1", "http://u:SECRET-1@example.com/?SECRET-2", "http://0x7f.1/x?token=SECRET-1"]) {
      const error = await refusal(url);
      expect(error.message).not.toContain("SECRET");
      expect(error.url).not.toContain("SECRET");
    }
  });
});

describe("safeUrl", () => {
  it.each([
    ["https://feeds.example.com/rss?api_key=SECRET#frag", "https://feeds.example.com/rss"],
    ["https://user:SECRET@feeds.example.com:8443/a/b", "https://feeds.example.com:8443/a/b"],
    ["http://[::1]:8080/x?SECRET", "http://[::1]:8080/x"],
    ["http://2130706433/?SECRET", "http://127.0.0.1/"],
    ["data:text/plain,SECRET", "data:…"],
    ["javascript:SECRET()", "javascript:…"],
    ["not a url?SECRET", "not a url"],
    ["https://user:SECRET@exa mple.com/?SECRET", "https://exa mple.com/"],
  ])("shows %s as %s", (url, shown) => {
    expect(safeUrl(url)).toBe(shown);
  });

  it("takes URL objects too", () => {
    expect(safeUrl(new URL("https://a:b@example.com/p?q=1"))).toBe("https://example.com/p");
  });
});

describe("upstream failures", () => {
  it("become 502 UPSTREAM_ERROR whose detail names the URL without its query", () => {
    const error = upstreamError(new OutboundFailure("timeout", "https://peer.example.com/mesh/gossip?token=SECRET", "timed out after 10000 ms"));
    expect(error.status).toBe(502);
    expect(error.toBody()).toStrictEqual({ code: "UPSTREAM_ERROR", detail: "outbound call to https://peer.example.com/mesh/gossip failed: timed out after 10000 ms" });
  });
});
