// The OAuth code flow (CONTRACT §19) as an MCP host lives it: from nothing but the server's URL to
// the first tool call with the MCP SDK's own client (discovery, registration, the human's consent
// over HTTP, the code, the connection), and the token endpoint's latency for codes and refreshes.
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { authorizeUrl, consent, OWNER_PASSWORD, pkce, register, signIn, tokenRequest } from "../test/helpers/oauth.js";
import { RecordingProvider } from "../test/helpers/oauth-provider.js";
import { latencyStats, newDataDir, progress, round, samplesRow, withServer, type Row, type Section } from "./lib.js";

export interface OAuthOptions {
  /** Fresh hosts connecting from nothing, one after another (at most 19: each registers, and so does the code phase's client). */
  connections: number;
  /** Codes redeemed (each after its own consent, which is not timed). */
  codes: number;
  /** Refreshes in one chain (each spends the token the previous one gave). */
  refreshes: number;
}

const REDIRECT = "http://127.0.0.1:58001/callback";

export async function runOAuthBench(options: OAuthOptions): Promise<Section> {
  return withServer(
    newDataDir(),
    16,
    async (server) => {
      await server.waitForHealth();
      const agent = await server.client.registerAgent("bench-oauth");
      const session = await signIn(server.url);
      const mcpUrl = new URL("/mcp", server.url);

      // Registered first: with the hosts below it stays within one address's 20 registrations a minute.
      const registered = await register(server.url, { client_name: "bench", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
      if (registered.status !== 201) throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
      const clientId = registered.body.client_id as string;

      progress(`oauth: ${options.connections} hosts from the server's URL to their first tool call`);
      const firstCall: number[] = [];
      const humanSteps: number[] = [];
      for (let index = 0; index < options.connections; index++) {
        const provider = new RecordingProvider(REDIRECT, `bench host ${index}`);
        const started = performance.now();
        const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
        try {
          await new Client({ name: "bench", version: "1" }).connect(transport);
        } catch (error) {
          if (!(error instanceof UnauthorizedError)) throw error;
        }
        const human = performance.now();
        const back = await consent(server.url, (provider.authorizationUrl as URL).href, session, { agent: agent.agentId });
        humanSteps.push(performance.now() - human);
        await transport.finishAuth(back.searchParams.get("code") as string);
        const client = new Client({ name: "bench", version: "1" });
        await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
        await client.callTool({ name: "agent_me", arguments: {} });
        firstCall.push(performance.now() - started);
        await client.close();
      }

      progress(`oauth: ${options.codes} codes redeemed, ${options.refreshes} refreshes`);
      const codeTimes: number[] = [];
      let refreshToken = "";
      for (let index = 0; index < options.codes; index++) {
        const { verifier, challenge } = pkce();
        const back = await consent(server.url, authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge }), session, { agent: agent.agentId });
        const started = performance.now();
        const answer = await tokenRequest(server.url, { grant_type: "authorization_code", code: back.searchParams.get("code") as string, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
        codeTimes.push(performance.now() - started);
        if (answer.status !== 200) throw new Error(`code: ${answer.status} ${JSON.stringify(answer.body)}`);
        refreshToken = answer.body.refresh_token as string;
      }
      const refreshTimes: number[] = [];
      for (let index = 0; index < options.refreshes; index++) {
        const started = performance.now();
        const answer = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
        refreshTimes.push(performance.now() - started);
        if (answer.status !== 200) throw new Error(`refresh: ${answer.status} ${JSON.stringify(answer.body)}`);
        refreshToken = answer.body.refresh_token as string;
      }
      const rssMb = round(server.memory().rssMb);
      const rows: Row[] = [
        samplesRow("URL → first tool call (MCP SDK client, consent included)", firstCall, null),
        samplesRow("of which the human's step (consent page GET + POST)", humanSteps, null),
        samplesRow("POST /oauth/token authorization_code", codeTimes, null),
        samplesRow("POST /oauth/token refresh_token (rotation)", refreshTimes, rssMb),
      ];
      return {
        name: "oauth",
        title: "OAuth code flow: a host from URL to first tool call, and the token endpoint",
        rows,
        targets: [],
        details: { firstCall: latencyStats(firstCall), codes: latencyStats(codeTimes), refreshes: latencyStats(refreshTimes) },
      };
    },
    { UI_PASSWORD: OWNER_PASSWORD, EMBEDDING_MODEL: "hash" },
  );
}
