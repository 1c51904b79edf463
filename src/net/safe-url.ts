/**
 * A URL as logs, errors and events may show it: scheme, host, port and path, without userinfo,
 * query or fragment, which is where tokens travel (`?api_key=`, `https://user:pass@`). Anything
 * that does not parse is cut the same way by hand, never returned whole.
 */
export function safeUrl(url: string | URL): string {
  try {
    const parsed = typeof url === "string" ? new URL(url) : url;
    // `origin` is "null" for schemes without one (file:, data:, javascript:); those keep only their scheme.
    if (parsed.origin === "null") return `${parsed.protocol}…`;
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    const text = String(url);
    const cut = text.replace(/[?#].*$/s, "").replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/]*@/i, "$1");
    return cut.length > 200 ? `${cut.slice(0, 200)}…` : cut;
  }
}
