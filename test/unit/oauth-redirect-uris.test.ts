import { describe, expect, it } from "vitest";
import { redirectHost, redirectUriMatches, redirectUriRefusal } from "../../src/services/oauth/redirect-uris.js";
import { isOwnResource, requestedScopes } from "../../src/services/oauth/scopes.js";
import { isMetadataDocumentUrl } from "../../src/services/oauth/metadata-documents.js";

// The pure rules of CONTRACT §19: which redirect URIs a registration keeps, which presented URI
// matches a registered one, which `resource` names this server, which scopes a request gets.

describe("redirect URIs at registration", () => {
  it.each([
    "https://app.example/callback",
    "https://app.example:8443/cb?tenant=a",
    "http://localhost/cb",
    "http://localhost:3000/callback",
    "http://127.0.0.1:33418",
    "http://[::1]:9/cb",
    "cursor://anysphere.cursor-mcp/oauth/callback",
    "com.example.app:/oauth2redirect",
    "vscode://vscode.github-authentication/did-authenticate",
  ])("keeps %s", (uri) => {
    expect(redirectUriRefusal(uri)).toBeNull();
  });

  it.each([
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "data:text/html,<script>x</script>",
    "file:///etc/passwd",
    "vbscript:msgbox",
    "https://app.example/cb#fragment",
    "https://app.example/cb#",
    "http://app.example/cb",
    "http://127.0.0.2/cb",
    "http://localhost.evil.example/cb",
    "https://user:pass@app.example/cb",
    "https://app.example/c b",
    "/relative/callback",
    "",
    `https://app.example/${"x".repeat(2000)}`,
  ])("refuses %s", (uri) => {
    expect(redirectUriRefusal(uri)).not.toBeNull();
  });
});

describe("redirect URI matching", () => {
  it("matches exactly, and on loopback any of the three names and any port with the same path and query", () => {
    expect(redirectUriMatches("cursor://anysphere.cursor-mcp/oauth/callback", "cursor://anysphere.cursor-mcp/oauth/callback")).toBe(true);
    expect(redirectUriMatches("http://127.0.0.1:1/callback", "http://localhost:2/callback")).toBe(true);
    expect(redirectUriMatches("http://localhost/callback", "http://[::1]:65000/callback")).toBe(true);
    expect(redirectUriMatches("http://127.0.0.1:1/callback?a=1", "http://localhost:2/callback?a=1")).toBe(true);
  });

  it("refuses anything else", () => {
    expect(redirectUriMatches("https://app.example/cb", "https://app.example/cb/")).toBe(false);
    expect(redirectUriMatches("https://app.example/cb", "https://APP.example/cb")).toBe(false);
    expect(redirectUriMatches("http://127.0.0.1:1/callback", "http://127.0.0.1:1/other")).toBe(false);
    expect(redirectUriMatches("http://127.0.0.1:1/callback", "https://127.0.0.1:1/callback")).toBe(false);
    expect(redirectUriMatches("http://127.0.0.1:1/callback", "http://evil.example:1/callback")).toBe(false);
    expect(redirectUriMatches("http://127.0.0.1:1/callback", "http://127.0.0.1:1/callback?x=1")).toBe(false);
    expect(redirectUriMatches("http://127.0.0.1:1/callback", "http://127.0.0.1:1/callback#x")).toBe(false);
    expect(redirectUriMatches("https://app.example/cb", "http://localhost/cb")).toBe(false);
  });

  it("names where the code goes", () => {
    expect(redirectHost("http://127.0.0.1:33418")).toBe("127.0.0.1:33418");
    expect(redirectHost("cursor://anysphere.cursor-mcp/oauth/callback")).toBe("cursor://anysphere.cursor-mcp");
    expect(redirectHost("com.example.app:/oauth")).toBe("com.example.app:");
  });
});

describe("resources and scopes", () => {
  it("takes <PUBLIC_URL>/mcp and PUBLIC_URL as this server, nothing else", () => {
    const base = "https://cairn.example:8443";
    for (const resource of [`${base}/mcp`, `${base}/mcp/`, base, `${base}/`]) expect(isOwnResource(resource, base), resource).toBe(true);
    for (const resource of ["https://other.example/mcp", `${base}/mcpx`, `${base}/mcp?x=1`, `${base}/mcp#f`, "http://cairn.example:8443/mcp", "https://cairn.example/mcp", "not a url"]) {
      expect(isOwnResource(resource, base), resource).toBe(false);
    }
    expect(isOwnResource("http://localhost:8470/mcp", "http://127.0.0.1:8470")).toBe(true);
    expect(isOwnResource("https://cairn.example/team/mcp", "https://cairn.example/team")).toBe(true);
  });

  it("gives both scopes unless cairn:read alone is asked for", () => {
    expect(requestedScopes(undefined)).toEqual(["cairn:read", "cairn:write"]);
    expect(requestedScopes("openid profile")).toEqual(["cairn:read", "cairn:write"]);
    expect(requestedScopes("cairn:write")).toEqual(["cairn:read", "cairn:write"]);
    expect(requestedScopes("cairn:read openid")).toEqual(["cairn:read"]);
  });

  it("takes an https URL with a path, as written, as a client metadata document", () => {
    expect(isMetadataDocumentUrl("https://app.example/oauth/client.json")).toBe(true);
    for (const id of ["https://app.example/", "https://app.example", "http://app.example/c.json", "https://app.example/c.json?x=1", "https://app.example/a/../c.json", "https://APP.example/c.json", "https://u@app.example/c.json"]) {
      expect(isMetadataDocumentUrl(id), id).toBe(false);
    }
  });
});
