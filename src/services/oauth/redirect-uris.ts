// Redirect URIs as CONTRACT §19 judges them, one at a time: `https:`, `http:` on a loopback host, or
// a private-use scheme (RFC 8252 §7.1, also in forms such as `cursor://anysphere.cursor-mcp/…`);
// never a scheme that runs or reads something where it lands, never a fragment.

export const MAX_REDIRECT_URI_LENGTH = 2000;

/** Schemes a redirect never uses: they run code, read local files, or are not places at all. */
const REFUSED_SCHEMES = new Set(["javascript:", "data:", "file:", "vbscript:", "blob:", "about:", "filesystem:", "view-source:", "ws:", "wss:", "ftp:", "mailto:", "tel:", "sms:"]);
/** Loopback as a redirect knows it: these three are one host, on any port (RFC 8252 §7.3). */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

export const isLoopbackHost = (hostname: string): boolean => LOOPBACK_HOSTS.has(hostname.toLowerCase());

/** Why a redirect URI is refused, or null when it is acceptable. */
export function redirectUriRefusal(raw: string): string | null {
  if (raw.length === 0 || raw.length > MAX_REDIRECT_URI_LENGTH) return `must be 1 to ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (!SCHEME.test(raw)) return "must be an absolute URI";
  if (raw.includes("#")) return "must not carry a fragment";
  // Whitespace and control characters would be read differently by different parsers.
  if ([...raw].some((char) => char.charCodeAt(0) <= 0x20 || char.charCodeAt(0) === 0x7f) || /\s/.test(raw)) return "must not contain whitespace or control characters";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a URI";
  }
  if (REFUSED_SCHEMES.has(url.protocol)) return `${url.protocol} is never a redirect`;
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password";
  if (url.protocol === "https:") return url.hostname === "" ? "needs a host" : null;
  if (url.protocol === "http:") return isLoopbackHost(url.hostname) ? null : "http: is allowed only on a loopback host (localhost, 127.0.0.1, [::1])";
  // A private-use scheme: an app claimed it; what follows is the app's.
  return null;
}

/** The part of a loopback http URI that must match: all but the host and port. */
function loopbackRest(url: URL): string {
  return `${url.pathname}${url.search}`;
}

/**
 * Whether a presented redirect URI is the registered one: the same string, or both `http:` on a
 * loopback host (any of the three, any port) with the same path and query.
 */
export function redirectUriMatches(registered: string, presented: string): boolean {
  if (registered === presented) return true;
  let a: URL;
  let b: URL;
  try {
    a = new URL(registered);
    b = new URL(presented);
  } catch {
    return false;
  }
  if (a.protocol !== "http:" || b.protocol !== "http:" || !isLoopbackHost(a.hostname) || !isLoopbackHost(b.hostname)) return false;
  if (presented.includes("#") || b.username !== "" || b.password !== "") return false;
  return loopbackRest(a) === loopbackRest(b);
}

/** What the consent page names as where the code goes: the host, or for a private-use scheme the scheme and host. */
export function redirectHost(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol === "http:" || url.protocol === "https:") return url.host;
    return url.host === "" ? url.protocol : `${url.protocol}//${url.host}`;
  } catch {
    return raw.slice(0, 100);
  }
}
