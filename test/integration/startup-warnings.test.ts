import { rmSync } from "node:fs";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/core/log.js";
import { cliEnv, startServe } from "../helpers/cli.js";
import { rawRequest } from "../helpers/raw.js";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.js";

/** CONTRACT §10a: a server reachable from other machines says what it lacks, and never sends anyone to 0.0.0.0. */

interface LogLine {
  level: string;
  msg: string;
  setting?: string;
}

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A server with `env`, and the warnings it logged while starting. */
async function started(env: Record<string, string>): Promise<{ server: TestServer; warnings: LogLine[] }> {
  const lines: string[] = [];
  const server = await startTestServer(env, { log: createLogger("warn", {}, (line) => lines.push(line)) });
  servers.push(server);
  const warnings = lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.level === "warn");
  return { server, warnings };
}

const machine = hostname().toLowerCase();
const portOf = (url: string): string => new URL(url).port;

describe("a server bound to every interface (HOST=0.0.0.0)", () => {
  it("warns at start that PUBLIC_URL and REGISTRATION_KEY are not set", async () => {
    const { warnings } = await started({ HOST: "0.0.0.0" });
    expect(warnings.map((warning) => warning.setting).sort()).toEqual(["PUBLIC_URL", "REGISTRATION_KEY"]);
    for (const warning of warnings) expect(warning.msg).toMatch(/HOST 0\.0\.0\.0 is not a loopback address/);
  });

  it("names this machine in every generated URL, and answers to that name", async () => {
    const { server } = await started({ HOST: "0.0.0.0" });
    const port = portOf(server.url);
    const publicUrl = `http://${machine}:${port}`;
    expect(server.server.publicUrl).toBe(publicUrl);
    // Its own address for this machine is loopback: the server refuses the Host 0.0.0.0.
    expect(server.url).toBe(`http://127.0.0.1:${port}`);

    const onboard = await server.request("/onboard");
    const metadata = await server.request("/.well-known/oauth-protected-resource");
    const openapi = await server.request<{ servers: { url: string }[] }>("/openapi.json");
    expect(onboard.text).toContain(publicUrl);
    expect(metadata.text).toContain(publicUrl);
    expect(openapi.body.servers[0]?.url).toBe(publicUrl);
    for (const generated of [onboard.text, metadata.text, openapi.text, await server.server.uiUrl()]) expect(generated).not.toContain("0.0.0.0");

    expect((await rawRequest(`${server.url}/health`, { headers: { host: `${machine}:${port}` } })).status).toBe(200);
    expect((await rawRequest(`${server.url}/health`, { headers: { host: `0.0.0.0:${port}` } })).status).toBe(403);
  });

  it("warns of nothing once PUBLIC_URL and REGISTRATION_KEY are set", async () => {
    const { server, warnings } = await started({ HOST: "0.0.0.0", PUBLIC_URL: "https://cairn.example.com", REGISTRATION_KEY: "a-registration-key-0123" });
    expect(warnings).toEqual([]);
    expect(server.server.publicUrl).toBe("https://cairn.example.com");
  });

  it("warns of nothing on loopback", async () => {
    expect((await started({})).warnings).toEqual([]);
  });
});

describe("cairn serve with HOST=0.0.0.0", () => {
  it("logs the warnings on stderr as structured lines and prints loopback and public URLs, never 0.0.0.0", async () => {
    const dir = tempDir("cairn-exposed-");
    dirs.push(dir);
    const served = await startServe(cliEnv(dir, { HOST: "0.0.0.0", LOG_LEVEL: "warn" }));
    const run = await served.stop();
    expect(run.code).toBe(0);
    const port = portOf(served.url);
    expect(served.url).toBe(`http://127.0.0.1:${port}`);
    expect(run.stdout).toContain(`public URL     http://${machine}:${port}`);
    expect(run.stdout).not.toContain("0.0.0.0");
    const warnings = run.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.level === "warn" && line.setting !== undefined);
    expect(warnings.map((warning) => warning.setting).sort()).toEqual(["PUBLIC_URL", "REGISTRATION_KEY"]);
  });
});
