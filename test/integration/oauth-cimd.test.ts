import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, startServe, type ServeProcess } from "../helpers/cli.js";
import { callTool } from "../helpers/mcp.js";
import { authorizeUrl, consent, openAuthorize, OWNER_PASSWORD, pkce, signIn, tokenRequest } from "../helpers/oauth.js";
import { RecordingProvider } from "../helpers/oauth-provider.js";
import { request, tempDir } from "../helpers/server.js";
import { makeCertificates } from "../helpers/tls.js";

// Client ID metadata documents (CONTRACT §19): a client whose id is an https URL, fetched through
// the outbound fetcher by a real `cairn serve` that trusts the test's own certificate authority.

interface Document {
  body: string;
  cacheControl?: string;
}

let documents: HttpsDocuments;
let serve: ServeProcess;

/** The test's HTTPS server: documents by path, and how often each was fetched. */
class HttpsDocuments {
  readonly served = new Map<string, Document>();
  readonly fetches = new Map<string, number>();
  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(cert: string, key: string): Promise<HttpsDocuments> {
    const server = createServer({ cert, key });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const documents = new HttpsDocuments(server, `https://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("request", (request, response) => {
      const path = request.url ?? "/";
      documents.fetches.set(path, (documents.fetches.get(path) ?? 0) + 1);
      const document = documents.served.get(path);
      if (!document) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": "application/json", ...(document.cacheControl ? { "cache-control": document.cacheControl } : {}) }).end(document.body);
    });
    return documents;
  }

  /** Serves a client metadata document at `path`; its URL, which is the client id. */
  publish(path: string, fields: Record<string, unknown>, cacheControl?: string): string {
    const clientId = `${this.origin}${path}`;
    this.served.set(path, { body: JSON.stringify({ client_id: clientId, ...fields }), ...(cacheControl ? { cacheControl } : {}) });
    return clientId;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

beforeAll(async () => {
  const certificates = makeCertificates();
  const dir = tempDir();
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, certificates.ca);
  documents = await HttpsDocuments.start(certificates.cert, certificates.key);
  serve = await startServe(cliEnv(tempDir(), { HOME: tempDir(), UI_PASSWORD: OWNER_PASSWORD, NODE_EXTRA_CA_CERTS: caFile, OUTBOUND_ALLOWLIST: "127.0.0.1" }));
});

afterAll(async () => {
  await serve.stop();
  await documents.close();
});

const REDIRECT = "http://127.0.0.1:54001/callback";

describe("OAuth clients by metadata document (CIMD)", () => {
  it("takes the MCP SDK's client by its metadata URL: consent shows the document's host, the tool acts as the chosen agent", async () => {
    const agent = await request<{ agent_id: string }>(serve.url, "/agents/self-register", { body: { agent_id: "cimd-agent" } });
    expect(agent.status).toBe(201);
    const clientId = documents.publish("/clients/sdk.json", { client_name: "CIMD host", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }, "max-age=3600");
    const provider = new RecordingProvider(REDIRECT, "CIMD host", clientId);
    const mcpUrl = new URL("/mcp", serve.url);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: "cimd", version: "1" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toBe(clientId);
    const authorizationUrl = provider.authorizationUrl as URL;
    const session = await signIn(serve.url);
    const page = await openAuthorize(authorizationUrl.href, session);
    expect(page.status).toBe(200);
    expect(page.html).toContain(new URL(documents.origin).host);
    expect(page.html).toContain("CIMD host");
    const back = await consent(serve.url, authorizationUrl.href, session, { agent: "cimd-agent" });
    await transport.finishAuth(back.searchParams.get("code") as string);
    const client = new Client({ name: "cimd", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await callTool<{ agent_id: string }>(client, "agent_me")).structured.agent_id).toBe("cimd-agent");
    await client.close();
    // Cached per its Cache-Control: the authorization, the consent and the token request fetched it once.
    expect(documents.fetches.get("/clients/sdk.json")).toBe(1);
  });

  it("fetches again a document that may not be cached", async () => {
    const clientId = documents.publish("/clients/no-store.json", { client_name: "No store", redirect_uris: [REDIRECT] }, "no-store");
    for (let round = 0; round < 2; round++) {
      expect((await openAuthorize(authorizeUrl(serve.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge }))).status).toBe(200);
    }
    expect(documents.fetches.get("/clients/no-store.json")).toBe(2);
  });

  it("refuses, as a page, a document whose client_id is not its URL, one that is not JSON, one too large, one missing, and a redirect URI it does not list", async () => {
    const session = await signIn(serve.url);
    const mismatched = documents.publish("/clients/mismatch.json", { redirect_uris: [REDIRECT] });
    documents.served.set("/clients/mismatch.json", { body: JSON.stringify({ client_id: `${documents.origin}/clients/other.json`, redirect_uris: [REDIRECT] }) });
    const notJson = `${documents.origin}/clients/not-json.json`;
    documents.served.set("/clients/not-json.json", { body: "<html>hello</html>" });
    const large = documents.publish("/clients/large.json", { redirect_uris: [REDIRECT], padding: "x".repeat(70 * 1024) });
    const missing = `${documents.origin}/clients/missing.json`;
    const secretive = documents.publish("/clients/secret.json", { redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" });
    const fine = documents.publish("/clients/fine.json", { redirect_uris: [REDIRECT] });
    for (const [clientId, redirect] of [
      [mismatched, REDIRECT],
      [notJson, REDIRECT],
      [large, REDIRECT],
      [missing, REDIRECT],
      [secretive, REDIRECT],
      [fine, "http://127.0.0.1:54001/elsewhere"],
    ] as const) {
      const page = await openAuthorize(authorizeUrl(serve.url, { client_id: clientId, redirect_uri: redirect, code_challenge: pkce().challenge, state: "s" }), session);
      expect(page.status, clientId).toBe(400);
      expect(page.location).toBeNull();
    }
  });

  it("redeems a code for a metadata-document client as a public client, and refuses its id once the document is gone", async () => {
    await request(serve.url, "/agents/self-register", { body: { agent_id: "cimd-plain" } });
    const clientId = documents.publish("/clients/plain.json", { client_name: "Plain", redirect_uris: [REDIRECT] }, "max-age=0");
    const { verifier, challenge } = pkce();
    const back = await consent(serve.url, authorizeUrl(serve.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge }), await signIn(serve.url), { agent: "cimd-plain" });
    const tokens = await tokenRequest(serve.url, { grant_type: "authorization_code", code: back.searchParams.get("code") as string, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(tokens.status).toBe(200);
    documents.served.delete("/clients/plain.json");
    const refresh = await tokenRequest(serve.url, { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token as string, client_id: clientId });
    expect(refresh).toMatchObject({ status: 401, body: { error: "invalid_client" } });
  });
});
