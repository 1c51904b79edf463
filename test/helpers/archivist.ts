import { Archivist, type ArchivistOptions } from "../../archivist/archivist.js";
import { archivistSettings, type ArchivistSettings } from "../../archivist/settings.js";
import { loadConfig } from "../../src/core/config.js";
import { createLogger, silentLogger, type Logger } from "../../src/core/log.js";
import type { FakeLlm } from "./fake-llm.js";
import { testEnv, type TestServer } from "./server.js";

/** Settings that point the archivist's model at the fake LLM, speaking `provider`'s API. */
export function llmEnv(fake: FakeLlm, provider: "openai" | "anthropic" = "openai"): Record<string, string> {
  return {
    ARCHIVIST_LLM_PROVIDER: provider,
    ARCHIVIST_LLM_BASE_URL: provider === "openai" ? fake.openaiBaseUrl : fake.anthropicBaseUrl,
    ARCHIVIST_LLM_MODEL: "fake-model",
    ARCHIVIST_LLM_API_KEY: "sk-fake-key",
    ARCHIVIST_LLM_TIMEOUT_SECONDS: "5",
  };
}

/** The settings `cairn archivist` would read from `env`, with the server's archivist credentials. */
function settingsFor(server: TestServer, env: Record<string, string> = {}): ArchivistSettings {
  const config = loadConfig(testEnv(server.dataDir, { ARCHIVIST_HOLDER: "test-archivist", ...env }));
  return archivistSettings(config, { url: server.url, agentId: server.archivist.agentId, apiKey: server.archivist.apiKey });
}

const testLogger = (): Logger =>
  process.env.TEST_LOG_LEVEL ? createLogger(process.env.TEST_LOG_LEVEL as "debug", { process: "archivist" }) : silentLogger;

/** An in-process archivist against the test server, started and holding the lease when this resolves. */
export async function startArchivist(server: TestServer, env: Record<string, string> = {}, options: ArchivistOptions = {}): Promise<Archivist> {
  const archivist = new Archivist(settingsFor(server, env), testLogger(), options);
  archivist.start();
  await archivist.leased();
  return archivist;
}

/** A clock a test moves forward by hand. */
export function manualClock(start = new Date()): { now: () => Date; advance(ms: number): void } {
  let at = start.getTime();
  return {
    now: () => new Date(at),
    advance(ms) {
      at += ms;
    },
  };
}

const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
