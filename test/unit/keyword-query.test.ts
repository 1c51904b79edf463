import { describe, expect, it } from "vitest";
import { keywordTerms } from "../../src/services/keyword-terms.js";
import { fts5Query } from "../../src/store/sqlite/keywords.js";

describe("keywordTerms: the words a search looks for", () => {
  it.each([
    ["drops stopwords", "when do deploys go out", ["deploys", "go"]],
    ["keeps the stopwords when nothing else is left", "the and of", ["the", "and", "of"]],
    ["folds case and asks for a repeated word once", "Deploy deploy DEPLOY", ["deploy"]],
    ["keeps FTS5's operators that are not stopwords as plain words, without their syntax", "foo AND bar OR NOT baz NEAR(x)", ["foo", "bar", "baz", "near", "x"]],
    ["drops quotes, stars, carets and column filters", 'say "hi" * ^col:x', ["say", "hi", "col", "x"]],
    ["splits words at hyphens and apostrophes", "pre-commit hook's", ["pre", "commit", "hook", "s"]],
    ["keeps letters and digits of any script, and underscores", "Größe café snake_case v2", ["größe", "café", "snake_case", "v2"]],
    ["keeps a word of 64 characters", `${"a".repeat(64)} short`, ["a".repeat(64), "short"]],
    ["drops a word longer than 64 characters", `${"a".repeat(65)} short`, ["short"]],
    ["answers no words for text without a word", "!!! ??? ---", []],
    ["answers no words for empty text", "", []],
  ])("%s", (_rule, text, words) => {
    expect(keywordTerms(text)).toEqual(words);
  });

  it("asks for at most 32 terms, the first ones", () => {
    const words = Array.from({ length: 40 }, (_, index) => `term${index}`);
    expect(keywordTerms(words.join(" "))).toEqual(words.slice(0, 32));
  });
});

describe("fts5Query: the FTS5 query for a search's words", () => {
  it.each([
    ["asks for any one of the words", ["a", "b"], '"a" OR "b"'],
    ["quotes a single word", ["deploy"], '"deploy"'],
    ["quotes every word, so FTS5's operators are words like any other", ["foo", "bar", "baz", "near", "x"], '"foo" OR "bar" OR "baz" OR "near" OR "x"'],
    ["quotes operator words that are stopwords too", ["the", "and", "of", "or", "not"], '"the" OR "and" OR "of" OR "or" OR "not"'],
  ])("%s", (_rule, words, query) => {
    expect(fts5Query(words)).toBe(query);
  });
});
