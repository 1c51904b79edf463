import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AnthropicModel,
  BudgetedModel,
  BudgetExhausted,
  createModel,
  estimateTokens,
  LlmError,
  OpenAiModel,
  TokenBudget,
  type LanguageModel,
} from "../../archivist/llm/index.js";
import { postJson } from "../../archivist/llm/http.js";
import { startFakeLlm, type FakeLlm } from "../helpers/fake-llm.js";

const KEY = "sk-secret-test-key";
const noWait = (): Promise<void> => Promise.resolve();

let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.calls.length = 0;
  fake.respond(() => "{}");
});

function openai(options: { retries?: number; timeoutMs?: number; apiKey?: string } = {}): OpenAiModel {
  return new OpenAiModel({ baseUrl: fake.openaiBaseUrl, model: "gpt-test", apiKey: options.apiKey ?? KEY, timeoutMs: options.timeoutMs ?? 5000, retries: options.retries ?? 0 });
}

function anthropic(options: { retries?: number; apiKey?: string } = {}): AnthropicModel {
  return new AnthropicModel({ baseUrl: fake.anthropicBaseUrl, model: "claude-test", apiKey: options.apiKey ?? KEY, timeoutMs: 5000, retries: options.retries ?? 0 });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

describe("OpenAiModel", () => {
  it("sends a chat-completions request and reads the answer and usage", async () => {
    fake.respond(() => '{"ok":true}');
    const completion = await openai().complete({ system: "be brief", user: "hello there", maxTokens: 123 });

    expect(completion).toEqual({ text: '{"ok":true}', promptTokens: Math.ceil("be briefhello there".length / 4), completionTokens: 3 });
    expect(fake.calls).toHaveLength(1);
    const call = fake.calls[0];
    expect(call).toMatchObject({ provider: "openai", system: "be brief", user: "hello there", model: "gpt-test", maxTokens: 123 });
    expect(call?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(call?.headers["content-type"]).toBe("application/json");
    expect(call?.body).toEqual({
      model: "gpt-test",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hello there" },
      ],
      max_tokens: 123,
      temperature: 0,
      response_format: { type: "json_object" },
    });
  });

  it("sends no authorization header without a key", async () => {
    await new OpenAiModel({ baseUrl: fake.openaiBaseUrl, model: "local", timeoutMs: 5000 }).complete({ system: "s", user: "u", maxTokens: 5 });
    expect(fake.calls[0]?.headers.authorization).toBeUndefined();
  });

  it("estimates usage when the answer has none", async () => {
    fake.respond(() => ({ status: 200, body: { choices: [{ message: { content: "abcdefgh" } }] } }));
    const completion = await openai().complete({ system: "sys", user: "user text", maxTokens: 10 });
    expect(completion).toEqual({ text: "abcdefgh", promptTokens: estimateTokens("sysuser text"), completionTokens: 2 });
  });

  it("rejects an answer of the wrong shape", async () => {
    fake.respond(() => ({ status: 200, body: { choices: [] } }));
    expect(await failure(openai().complete({ system: "s", user: "u", maxTokens: 5 }))).toBeInstanceOf(LlmError);
  });
});

describe("AnthropicModel", () => {
  it("sends a messages request and reads the answer and usage", async () => {
    fake.respond(() => ({
      status: 200,
      body: {
        content: [
          { type: "text", text: '{"a":' },
          { type: "tool_use", id: "x", name: "n", input: {} },
          { type: "text", text: "1}" },
        ],
        usage: { input_tokens: 11, output_tokens: 7 },
      },
    }));
    const completion = await anthropic().complete({ system: "be brief", user: "hello there", maxTokens: 99 });

    expect(completion).toEqual({ text: '{"a":1}', promptTokens: 11, completionTokens: 7 });
    const call = fake.calls[0];
    expect(call).toMatchObject({ provider: "anthropic", system: "be brief", user: "hello there", model: "claude-test", maxTokens: 99 });
    expect(call?.headers["x-api-key"]).toBe(KEY);
    expect(call?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(call?.headers.authorization).toBeUndefined();
    expect(call?.body).toEqual({ model: "claude-test", max_tokens: 99, temperature: 0, system: "be brief", messages: [{ role: "user", content: "hello there" }] });
  });

  it("reads the fake's default answer with its usage", async () => {
    const completion = await anthropic().complete({ system: "abcd", user: "efgh", maxTokens: 5 });
    expect(completion).toEqual({ text: "{}", promptTokens: 2, completionTokens: 1 });
  });
});

describe("retries and errors", () => {
  it("retries a 429 after retry-after", async () => {
    fake.respond(() => (fake.calls.length === 1 ? { status: 429, body: { error: "slow down" }, headers: { "retry-after": "0" } } : "{}"));
    const completion = await openai({ retries: 2 }).complete({ system: "s", user: "u", maxTokens: 5 });
    expect(completion.text).toBe("{}");
    expect(fake.calls).toHaveLength(2);
  });

  it("retries 500s and then succeeds", async () => {
    fake.respond(() => (fake.calls.length <= 2 ? { status: 500, body: { error: "boom" } } : '{"done":1}'));
    const waits: number[] = [];
    const sleep = (ms: number): Promise<void> => {
      waits.push(ms);
      return Promise.resolve();
    };
    const answer = await postJson(`${fake.openaiBaseUrl}/chat/completions`, {}, { model: "m", messages: [] }, { timeoutMs: 5000, retries: 2, sleep });
    expect(answer).toMatchObject({ choices: [{ message: { content: '{"done":1}' } }] });
    expect(fake.calls).toHaveLength(3);
    // Exponential backoff with jitter: 500–750 ms, then 1000–1250 ms.
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(500);
    expect(waits[0]).toBeLessThan(750);
    expect(waits[1]).toBeGreaterThanOrEqual(1000);
    expect(waits[1]).toBeLessThan(1250);
  });

  it("caps retry-after at 60 seconds", async () => {
    fake.respond(() => (fake.calls.length === 1 ? { status: 503, headers: { "retry-after": "3600" } } : "{}"));
    const waits: number[] = [];
    await postJson(`${fake.openaiBaseUrl}/chat/completions`, {}, {}, { timeoutMs: 5000, retries: 1, sleep: (ms) => (waits.push(ms), Promise.resolve()) });
    expect(waits).toEqual([60_000]);
  });

  it("does not retry a 400", async () => {
    fake.respond(() => ({ status: 400, body: { error: { message: "bad request" } } }));
    const error = await failure(postJson(`${fake.openaiBaseUrl}/chat/completions`, {}, {}, { timeoutMs: 5000, retries: 3, sleep: noWait }));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).status).toBe(400);
    expect((error as LlmError).message).toContain("400");
    expect((error as LlmError).message).toContain("bad request");
    expect(fake.calls).toHaveLength(1);
  });

  it("never puts the API key in the error message", async () => {
    fake.respond(() => ({ status: 401, body: { error: { message: "invalid credentials" } } }));
    for (const model of [openai({ retries: 0 }), anthropic({ retries: 0 })] as LanguageModel[]) {
      const error = await failure(model.complete({ system: "s", user: "u", maxTokens: 5 }));
      expect(error).toBeInstanceOf(LlmError);
      expect((error as LlmError).status).toBe(401);
      expect((error as LlmError).message).not.toContain(KEY);
      expect(String(error)).not.toContain(KEY);
    }
  });

  it("quotes at most 200 characters of the answer", async () => {
    fake.respond(() => ({ status: 422, body: "x".repeat(1000) }));
    const error = (await failure(postJson(`${fake.openaiBaseUrl}/chat/completions`, {}, {}, { timeoutMs: 5000, retries: 0 }))) as LlmError;
    expect(error.message).toContain("x".repeat(200));
    expect(error.message).not.toContain("x".repeat(201));
  });

  it("gives up when the retries run out", async () => {
    fake.respond(() => ({ status: 503, body: { error: "down" } }));
    const error = await failure(postJson(`${fake.anthropicBaseUrl}/v1/messages`, {}, {}, { timeoutMs: 5000, retries: 2, sleep: noWait }));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).status).toBe(503);
    expect(fake.calls).toHaveLength(3);
  });

  it("rejects a success answer that is not JSON", async () => {
    fake.respond(() => ({ status: 200, body: "not json" }));
    const error = await failure(postJson(`${fake.openaiBaseUrl}/chat/completions`, {}, {}, { timeoutMs: 5000, retries: 0 }));
    expect(error).toBeInstanceOf(LlmError);
  });

  it("fails with status null when the model is too slow", async () => {
    fake.respond(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return "{}";
    });
    const error = await failure(openai({ timeoutMs: 200, retries: 0 }).complete({ system: "s", user: "u", maxTokens: 5 }));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).status).toBeNull();
  });

  it("fails with status null when nothing listens", async () => {
    const gone = await startFakeLlm();
    await gone.close();
    const error = await failure(postJson(`${gone.url}/v1/messages`, {}, {}, { timeoutMs: 2000, retries: 1, sleep: noWait }));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).status).toBeNull();
  });

  it("answers unknown paths with 404", async () => {
    const error = await failure(postJson(`${fake.url}/v2/other`, {}, {}, { timeoutMs: 5000, retries: 0 }));
    expect((error as LlmError).status).toBe(404);
    expect(fake.calls).toHaveLength(0);
  });
});

describe("budget", () => {
  it("refuses a call the budget cannot cover without sending it", async () => {
    const model = new BudgetedModel(openai(), new TokenBudget(100));
    const error = await failure(model.complete({ system: "s", user: "u", maxTokens: 200 }));
    expect(error).toBeInstanceOf(BudgetExhausted);
    expect(fake.calls).toHaveLength(0);
    expect(model.calls).toBe(0);
  });

  it("records usage and refuses once the budget is spent", async () => {
    fake.respond(() => ({ status: 200, body: { choices: [{ message: { content: "{}" } }], usage: { prompt_tokens: 40, completion_tokens: 20 } } }));
    const budget = new TokenBudget(100);
    const model = new BudgetedModel(openai(), budget);
    await model.complete({ system: "s", user: "u", maxTokens: 30 });

    expect(budget.spentLastHour()).toBe(60);
    expect(budget.available()).toBe(40);
    expect({ calls: model.calls, prompt: model.promptTokens, completion: model.completionTokens }).toEqual({ calls: 1, prompt: 40, completion: 20 });
    expect(model.provider).toBe("openai");
    expect(model.model).toBe("gpt-test");

    // 1 prompt token + 40 reply tokens is more than the 40 left.
    expect(await failure(model.complete({ system: "s", user: "u", maxTokens: 40 }))).toBeInstanceOf(BudgetExhausted);
    expect(fake.calls).toHaveLength(1);
  });

  it("forgets spending older than an hour", () => {
    let now = 1_000_000;
    const budget = new TokenBudget(1000, () => now);
    budget.record(300);
    now += 30 * 60_000;
    budget.record(200);
    expect(budget.spentLastHour()).toBe(500);
    expect(budget.available()).toBe(500);

    now += 30 * 60_000 + 1;
    expect(budget.spentLastHour()).toBe(200);
    now += 30 * 60_000;
    expect(budget.spentLastHour()).toBe(0);
    expect(budget.available()).toBe(1000);
  });
});

describe("createModel", () => {
  const base = { timeoutSeconds: 5, tokenBudgetPerHour: 10_000 };

  it("returns null for provider none", () => {
    expect(createModel({ ...base, provider: "none", apiKey: KEY })).toBeNull();
  });

  it("builds each provider with its defaults", () => {
    const openaiModel = createModel({ ...base, provider: "openai" });
    expect(openaiModel?.inner).toBeInstanceOf(OpenAiModel);
    expect(openaiModel?.model).toBe("gpt-4o-mini");
    const anthropicModel = createModel({ ...base, provider: "anthropic" });
    expect(anthropicModel?.inner).toBeInstanceOf(AnthropicModel);
    expect(anthropicModel?.model).toBe("claude-haiku-4-5");
  });

  it("talks to a configured endpoint through the budget", async () => {
    const model = createModel({ ...base, provider: "anthropic", baseUrl: `${fake.anthropicBaseUrl}/`, model: "claude-x", apiKey: KEY });
    const completion = await model?.complete({ system: "s", user: "u", maxTokens: 5 });
    expect(completion?.text).toBe("{}");
    expect(fake.calls[0]).toMatchObject({ provider: "anthropic", model: "claude-x" });
    expect(model?.calls).toBe(1);
  });
});
