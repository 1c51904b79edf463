import { hostname } from "node:os";
import type { Config } from "../src/core/config.js";
import type { ModelSettings } from "./llm/index.js";
import type { UpkeepSettings } from "./upkeep.js";

/** What the archivist process needs to know, read from the same settings as the server. */
export interface ArchivistSettings extends UpkeepSettings {
  url: string;
  agentId: string;
  apiKey: string;
  /** This instance's name on the lease: stable across its renewals (and, under `serve`, its restarts). */
  holder: string;
  leaseSeconds: number;
  uiAgentId: string;
  synthesisIntervalSeconds: number;
  conflictThreshold: number;
  directiveConflictThreshold: number;
  staleAgentDays: number;
  staleAgeDays: number;
  staleCooldownHours: number;
  llm: ModelSettings;
}

/** The archivist's settings from the server's configuration and its client credentials. */
export function archivistSettings(config: Config, credentials: { url: string; agentId: string; apiKey: string }): ArchivistSettings {
  return {
    ...credentials,
    holder: config.ARCHIVIST_HOLDER ?? `${hostname()}:${process.pid}`,
    leaseSeconds: config.ARCHIVIST_LEASE_SECONDS,
    uiAgentId: config.UI_AGENT_ID,
    synthesisIntervalSeconds: config.SYNTHESIS_INTERVAL_SECONDS,
    conflictThreshold: config.CONFLICT_THRESHOLD,
    directiveConflictThreshold: config.DIRECTIVE_CONFLICT_THRESHOLD,
    staleAgentDays: config.DIRECTIVE_STALENESS_AGENT_DAYS,
    staleAgeDays: config.DIRECTIVE_STALENESS_AGE_DAYS,
    staleCooldownHours: config.DIRECTIVE_STALENESS_COOLDOWN_HOURS,
    decayRate: config.DECAY_RATE,
    decayFloor: config.DECAY_FLOOR,
    decayWindowDays: config.DECAY_WINDOW_DAYS,
    promotionMinConfidence: config.PROMOTION_MIN_CONFIDENCE,
    promotionMinReaders: config.PROMOTION_MIN_READERS,
    promotionMinReinforcements: config.PROMOTION_MIN_REINFORCEMENTS,
    promotionStableDays: config.PROMOTION_STABLE_DAYS,
    llm: {
      provider: config.ARCHIVIST_LLM_PROVIDER,
      baseUrl: config.ARCHIVIST_LLM_BASE_URL,
      model: config.ARCHIVIST_LLM_MODEL,
      apiKey: config.ARCHIVIST_LLM_API_KEY,
      timeoutSeconds: config.ARCHIVIST_LLM_TIMEOUT_SECONDS,
      tokenBudgetPerHour: config.ARCHIVIST_TOKEN_BUDGET_PER_HOUR,
    },
  };
}
