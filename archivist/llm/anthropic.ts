import { z } from "zod";
import { postJson } from "./http.js";
import { DEFAULT_RETRIES, estimateTokens, LlmError, type Completion, type CompletionRequest, type LanguageModel, type ModelOptions } from "./model.js";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
export const ANTHROPIC_DEFAULT_MODEL = "claude-haiku-4-5";
const API_VERSION = "2023-06-01";

const MessagesResponse = z.object({
  // Blocks other than text (tool use, thinking) carry no answer text; they pass through unread.
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  usage: z.object({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).nullish(),
});

/** The Anthropic Messages API. */
export class AnthropicModel implements LanguageModel {
  readonly provider = "anthropic";
  readonly model: string;

  constructor(private readonly options: ModelOptions) {
    this.model = options.model;
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    const headers: Record<string, string> = { "content-type": "application/json", "anthropic-version": API_VERSION };
    if (this.options.apiKey) headers["x-api-key"] = this.options.apiKey;
    const body = {
      model: this.model,
      max_tokens: request.maxTokens,
      temperature: 0,
      system: request.system,
      messages: [{ role: "user", content: request.user }],
    };
    const raw = await postJson(`${this.options.baseUrl}/v1/messages`, headers, body, {
      timeoutMs: this.options.timeoutMs,
      retries: this.options.retries ?? DEFAULT_RETRIES,
    });
    const parsed = MessagesResponse.safeParse(raw);
    if (!parsed.success) throw new LlmError("the messages answer does not have the expected shape", null);
    const text = parsed.data.content
      .filter((block) => block.type === "text")
      .map((block) => block.text ?? "")
      .join("");
    return {
      text,
      promptTokens: parsed.data.usage?.input_tokens ?? estimateTokens(request.system + request.user),
      completionTokens: parsed.data.usage?.output_tokens ?? estimateTokens(text),
    };
  }
}
