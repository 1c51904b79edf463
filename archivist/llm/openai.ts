import { z } from "zod";
import { postJson } from "./http.js";
import { DEFAULT_RETRIES, estimateTokens, LlmError, type Completion, type CompletionRequest, type LanguageModel, type ModelOptions } from "./model.js";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const OPENAI_DEFAULT_MODEL = "gpt-4o-mini";

const ChatResponse = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).nullish(),
});

/** Any OpenAI-compatible chat-completions endpoint (OpenAI itself, local servers, proxies). */
export class OpenAiModel implements LanguageModel {
  readonly provider = "openai";
  readonly model: string;

  constructor(private readonly options: ModelOptions) {
    this.model = options.model;
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const body = {
      model: this.model,
      messages: [
        { role: "system", content: request.system },
        { role: "user", content: request.user },
      ],
      max_tokens: request.maxTokens,
      temperature: 0,
      // The archivist's prompts all ask for JSON; this keeps the model from wrapping it in prose.
      response_format: { type: "json_object" },
    };
    const raw = await postJson(`${this.options.baseUrl}/chat/completions`, headers, body, {
      timeoutMs: this.options.timeoutMs,
      retries: this.options.retries ?? DEFAULT_RETRIES,
    });
    const parsed = ChatResponse.safeParse(raw);
    if (!parsed.success) throw new LlmError("the chat-completions answer does not have the expected shape", null);
    const text = parsed.data.choices[0]?.message.content ?? "";
    return {
      text,
      promptTokens: parsed.data.usage?.prompt_tokens ?? estimateTokens(request.system + request.user),
      completionTokens: parsed.data.usage?.completion_tokens ?? estimateTokens(text),
    };
  }
}
