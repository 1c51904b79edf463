import { readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect } from "vitest";
import { checksIn, runSuite, serverScenarios, type ConformanceCheck } from "../helpers/conformance.js";
import { test } from "../helpers/fixtures.js";
import { startHeaderProxy } from "../helpers/header-proxy.js";
import { consent, OWNER_PASSWORD, signIn } from "../helpers/oauth.js";
import { RecordingProvider } from "../helpers/oauth-provider.js";
import { request, tempDir } from "../helpers/server.js";

/** What the suite checks of Cairn's own behaviour: each of these must pass. */
const APPLICABLE = [
  "server-initialize",
  "ping",
  "tools-list",
  "resources-list",
  "prompts-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
] as const;

interface NotApplicable {
  reason: string;
  /**
   * What the suite reports instead, so a scenario fails for the reason given and no other: the
   * error its failure carries, or null when it finds nothing to check and reports no result.
   */
  shows: RegExp | null;
}

const fixture = (what: string): string => `needs the suite's reference ${what}, which Cairn does not have`;
const UNKNOWN_TOOL = /MCP error -32602: unknown tool: test_/;
const UNKNOWN_PROMPT = /MCP error -32602: unknown prompt: test_/;
const UNKNOWN_RESOURCE = /MCP error -32002: resource not found/;
const METHOD_NOT_FOUND = /MCP error -32601: Method not found/;

/**
 * Scenarios that exercise the suite's reference server (its `test_*` tools, prompts and `test://`
 * resources) or optional capabilities Cairn does not declare. docs/mcp.md lists each with its reason.
 */
const NOT_APPLICABLE: Record<string, NotApplicable> = {
  "logging-set-level": { reason: "Cairn does not declare the optional logging capability", shows: METHOD_NOT_FOUND },
  "completion-complete": { reason: "Cairn does not declare the optional completions capability (and has no prompt arguments to complete)", shows: METHOD_NOT_FOUND },
  "tools-call-simple-text": { reason: fixture("tool `test_simple_text`"), shows: UNKNOWN_TOOL },
  "tools-call-image": { reason: fixture("tool `test_image_content`"), shows: UNKNOWN_TOOL },
  "tools-call-audio": { reason: fixture("tool `test_audio_content`"), shows: UNKNOWN_TOOL },
  "tools-call-embedded-resource": { reason: fixture("tool `test_embedded_resource`"), shows: UNKNOWN_TOOL },
  "tools-call-mixed-content": { reason: fixture("tool `test_multiple_content_types`"), shows: UNKNOWN_TOOL },
  "tools-call-with-logging": { reason: `${fixture("tool `test_tool_with_logging`")}, and the logging capability`, shows: METHOD_NOT_FOUND },
  "tools-call-error": { reason: fixture("tool `test_error_handling`"), shows: UNKNOWN_TOOL },
  "tools-call-with-progress": { reason: `${fixture("tool `test_tool_with_progress`")}; no Cairn tool reports progress`, shows: UNKNOWN_TOOL },
  "tools-call-sampling": { reason: `${fixture("tool `test_sampling`")}; Cairn never asks the client for sampling`, shows: UNKNOWN_TOOL },
  "tools-call-elicitation": { reason: `${fixture("tool `test_elicitation`")}; Cairn never asks the client for input`, shows: UNKNOWN_TOOL },
  "json-schema-2020-12": { reason: fixture("tool `json_schema_2020_12_tool`"), shows: /Tool 'json_schema_2020_12_tool' not found/ },
  "elicitation-sep1034-defaults": { reason: fixture("tool `test_elicitation_sep1034_defaults`"), shows: UNKNOWN_TOOL },
  "elicitation-sep1330-enums": { reason: fixture("tool `test_elicitation_sep1330_enums`"), shows: UNKNOWN_TOOL },
  "server-sse-polling": {
    reason: `${fixture("tool `test_reconnection`")}, and Cairn answers calls as plain JSON (which the transport allows), so there is no call stream to resume; the suite reports its checks not applicable`,
    shows: null,
  },
  "resources-read-text": { reason: fixture("resource `test://static-text`"), shows: UNKNOWN_RESOURCE },
  "resources-read-binary": { reason: fixture("resource `test://static-binary`"), shows: UNKNOWN_RESOURCE },
  "resources-templates-read": { reason: `${fixture("template `test://template/{id}/data`")}; Cairn has no templates`, shows: UNKNOWN_RESOURCE },
  "resources-subscribe": { reason: fixture("resource `test://watched-resource`"), shows: UNKNOWN_RESOURCE },
  "resources-unsubscribe": { reason: fixture("resource `test://watched-resource`"), shows: UNKNOWN_RESOURCE },
  "prompts-get-simple": { reason: fixture("prompt `test_simple_prompt`"), shows: UNKNOWN_PROMPT },
  "prompts-get-with-args": { reason: fixture("prompt `test_prompt_with_arguments`"), shows: UNKNOWN_PROMPT },
  "prompts-get-embedded-resource": { reason: fixture("prompt `test_prompt_with_embedded_resource`"), shows: UNKNOWN_PROMPT },
  "prompts-get-with-image": { reason: fixture("prompt `test_prompt_with_image`"), shows: UNKNOWN_PROMPT },
};

const DOCS = readFileSync(resolve(import.meta.dirname, "../../docs/mcp.md"), "utf8");

const judged = (checks: ConformanceCheck[]): ConformanceCheck[] => checks.filter((check) => check.status !== "INFO");

describe("the MCP conformance suite (@modelcontextprotocol/conformance) against /mcp, authorized through the OAuth flow", () => {
  const it = test
    // Where the suite writes each scenario's checks.
    // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
    .extend("outputDir", ({}, { onCleanup }) => {
      const dir = tempDir("cairn-conformance-");
      onCleanup(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    });
  // The human's password, for the consent page.
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("has the scenarios this test knows, each judged applicable or not applicable with a reason", async () => {
    const known = [...APPLICABLE, ...Object.keys(NOT_APPLICABLE)].sort();
    // A scenario the suite gains or loses fails here: someone should look at it.
    expect((await serverScenarios()).sort()).toEqual(known);
    expect(new Set(known).size).toBe(known.length);
  });

  it("passes every applicable scenario, and fails the others only for want of the suite's fixtures", { timeout: 180_000 }, async ({ server, outputDir }) => {
    // The suite's server mode cannot authorize itself (its clients carry no credentials), so a host
    // does it for the suite the way any host does, through the authorization-code flow: the MCP
    // SDK discovers and registers, a human signs in and allows it as a new agent, the SDK redeems
    // the code. A loopback proxy then adds that access token, and nothing else, to the suite's
    // requests; Host and Origin pass through.
    const mcpUrl = new URL("/mcp", server.url);
    const host = new RecordingProvider("http://127.0.0.1:48121/callback", "MCP conformance suite");
    expect(await auth(host, { serverUrl: mcpUrl })).toBe("REDIRECT");
    const back = await consent(server.url, (host.authorizationUrl as URL).href, await signIn(server.url), { agent: { create: "conformance" } });
    expect(await auth(host, { serverUrl: mcpUrl, authorizationCode: back.searchParams.get("code") as string })).toBe("AUTHORIZED");
    const accessToken = host.saved?.access_token as string;
    expect(accessToken).toMatch(/^cairn_at_/);
    const proxy = await startHeaderProxy(server.url, { authorization: `Bearer ${accessToken}` });
    try {
      const run = await runSuite(["server", "--url", `${proxy.url}/mcp`, "--suite", "all", "--output-dir", outputDir]);
      // Through the proxy, the suite's requests are the agent the human chose.
      const me = await request<{ agent_id: string }>(proxy.url, "/agents/me");
      expect(me.body.agent_id).toBe("conformance");
      const results = checksIn(outputDir);
      expect([...results.keys()].sort(), run.stdout + run.stderr).toEqual([...APPLICABLE, ...Object.keys(NOT_APPLICABLE)].sort());
      for (const scenario of APPLICABLE) {
        const checks = judged(results.get(scenario) ?? []);
        expect(checks.length, `${scenario} checked nothing`).toBeGreaterThan(0);
        expect(checks.filter((check) => check.status !== "SUCCESS"), scenario).toEqual([]);
      }
      for (const [scenario, { shows }] of Object.entries(NOT_APPLICABLE)) {
        const checks = judged(results.get(scenario) ?? []);
        if (shows === null) {
          expect(checks, scenario).toEqual([]);
          continue;
        }
        expect(checks.filter((check) => check.status === "SUCCESS"), `${scenario} now passes: is it applicable?`).toEqual([]);
        expect(checks.some((check) => check.status === "FAILURE" && shows.test(check.errorMessage ?? "")), `${scenario}: ${JSON.stringify(checks)}`).toBe(true);
      }
    } finally {
      await proxy.close();
    }
  });

  it("is reported scenario by scenario in docs/mcp.md", () => {
    const section = DOCS.slice(DOCS.indexOf("## Protocol conformance"));
    for (const scenario of APPLICABLE) expect(section).toMatch(new RegExp(`^\\| \`${scenario}\` \\| passes \\|`, "m"));
    for (const scenario of Object.keys(NOT_APPLICABLE)) expect(section).toMatch(new RegExp(`^\\| \`${scenario}\` \\| not applicable \\|`, "m"));
  });
});
