import { AnthropicModel, ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_DEFAULT_MODEL } from "./anthropic.js";
import { BudgetedModel, TokenBudget } from "./budget.js";
import { OpenAiModel, OPENAI_DEFAULT_BASE_URL, OPENAI_DEFAULT_MODEL } from "./openai.js";

export { AnthropicModel,   } from "./anthropic.js";
export { BudgetedModel, TokenBudget } from "./budget.js";
;
export { BudgetExhausted, estimateTokens, LlmError, type Completion, type CompletionRequest, type LanguageModel,  } from "./model.js";
export { OpenAiModel,   } from "./openai.js";

export interface ModelSettings {
  provider: "none" | "openai" | "anthropic";
  baseUrl?: string | undefined;
  model?: string | undefined;
  apiKey?: string | undefined;
  timeoutSeconds: number;
  tokenBudgetPerHour: number;
}

/** The configured model behind its budget, or null for `none`: then no object exists that could call out. */
export function createModel(settings: ModelSettings): BudgetedModel | null {
  if (settings.provider === "none") return null;
  const common = { apiKey: settings.apiKey, timeoutMs: settings.timeoutSeconds * 1000 };
  // A configured base URL may carry a trailing slash; the models append their own paths.
  const baseUrl = settings.baseUrl?.replace(/\/+$/, "") || undefined;
  const inner =
    settings.provider === "openai"
      ? new OpenAiModel({ ...common, baseUrl: baseUrl ?? OPENAI_DEFAULT_BASE_URL, model: settings.model || OPENAI_DEFAULT_MODEL })
      : new AnthropicModel({ ...common, baseUrl: baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL, model: settings.model || ANTHROPIC_DEFAULT_MODEL });
  return new BudgetedModel(inner, new TokenBudget(settings.tokenBudgetPerHour));
}
