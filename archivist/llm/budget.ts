import { BudgetExhausted, estimateTokens, type Completion, type CompletionRequest, type LanguageModel } from "./model.js";

const HOUR_MS = 3_600_000;

/** Tokens spent over a sliding hour, so a burst cannot be followed at once by another. */
export class TokenBudget {
  private readonly spending: { at: number; tokens: number }[] = [];

  constructor(
    readonly perHour: number,
    private readonly clock: () => number = Date.now,
  ) {}

  spentLastHour(): number {
    this.forget();
    return this.spending.reduce((sum, item) => sum + item.tokens, 0);
  }

  available(): number {
    return Math.max(0, this.perHour - this.spentLastHour());
  }

  record(tokens: number): void {
    if (tokens > 0) this.spending.push({ at: this.clock(), tokens });
  }

  private forget(): void {
    const cutoff = this.clock() - HOUR_MS;
    // Entries are pushed in time order, so the old ones are all at the front.
    while (this.spending.length > 0 && (this.spending[0]?.at ?? Infinity) <= cutoff) this.spending.shift();
  }
}

/** A model that refuses calls the budget cannot cover and counts what the calls cost. */
export class BudgetedModel implements LanguageModel {
  private totals = { calls: 0, promptTokens: 0, completionTokens: 0 };

  constructor(
    readonly inner: LanguageModel,
    readonly budget: TokenBudget,
  ) {}

  get provider(): LanguageModel["provider"] {
    return this.inner.provider;
  }

  get model(): string {
    return this.inner.model;
  }

  get calls(): number {
    return this.totals.calls;
  }

  get promptTokens(): number {
    return this.totals.promptTokens;
  }

  get completionTokens(): number {
    return this.totals.completionTokens;
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    // The worst case: the whole prompt plus a reply that uses every allowed token.
    const estimate = estimateTokens(request.system + request.user) + request.maxTokens;
    const available = this.budget.available();
    if (estimate > available) throw new BudgetExhausted(`a call needs about ${estimate} tokens but only ${available} remain this hour`);
    const completion = await this.inner.complete(request);
    this.budget.record(completion.promptTokens + completion.completionTokens);
    this.totals = {
      calls: this.totals.calls + 1,
      promptTokens: this.totals.promptTokens + completion.promptTokens,
      completionTokens: this.totals.completionTokens + completion.completionTokens,
    };
    return completion;
  }
}
