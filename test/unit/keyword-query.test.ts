import { describe, expect, it } from "vitest";
import { keywordQuery } from "../../src/services/memory-search.js";

describe("keywordQuery: the FTS5 query for a search's keywords", () => {
  it.each([
    ["drops stopwords", "when do deploys go out", '"deploys" OR "go"'],
    ["keeps the stopwords when nothing else is left", "the and of", '"the" OR "and" OR "of"'],
    ["folds case and asks for a repeated word once", "Deploy deploy DEPLOY", '"deploy"'],
    ["quotes every word, so FTS5's operators are words like any other", "foo AND bar OR NOT baz NEAR(x)", '"foo" OR "bar" OR "baz" OR "near" OR "x"'],
    ["drops quotes, stars, carets and column filters", 'say "hi" * ^col:x', '"say" OR "hi" OR "col" OR "x"'],
    ["splits words at hyphens and apostrophes", "pre-commit hook's", '"pre" OR "commit" OR "hook" OR "s"'],
    ["keeps letters and digits of any script, and underscores", "Größe café snake_case v2", '"größe" OR "café" OR "snake_case" OR "v2"'],
    ["keeps a word of 64 characters", `${"a".repeat(64)} short`, `"${"a".repeat(64)}" OR "short"`],
    ["drops a word longer than 64 characters", `${"a".repeat(65)} short`, '"short"'],
    ["answers null for text without a word", "!!! ??? ---", null],
    ["answers null for empty text", "", null],
  ])("%s", (_rule, text, query) => {
    expect(keywordQuery(text)).toBe(query);
  });

  it("asks for at most 32 terms, the first ones", () => {
    const words = Array.from({ length: 40 }, (_, index) => `term${index}`);
    expect(keywordQuery(words.join(" "))).toBe(
      words
        .slice(0, 32)
        .map((word) => `"${word}"`)
        .join(" OR "),
    );
  });
});
