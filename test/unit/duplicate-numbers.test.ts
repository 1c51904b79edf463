import { describe, expect, it } from "vitest";
import { numbersIn } from "../../src/services/memory-overlap.js";

// A near-identical entry is a duplicate only when it carries the same numbers: "port 8080" and
// "port 8081" are two facts however close their meaning.

describe("numbersIn: the tokens of a text that carry digits", () => {
  it.each([
    ["none in a text without digits, numbers written as words included", "builds take four minutes", []],
    ["a plain number", "The staging API listens on port 8080", ["8080"]],
    ["a version as one token", "Upgrade to v1.2.3 today", ["v1.2.3"]],
    ["a date as one token", "Released on 2024-01-05.", ["2024-01-05"]],
    ["an address and port as one token", "postgres at 10.0.0.1:5432", ["10.0.0.1:5432"]],
    ["a URL as one token, without its trailing slash", "see http://localhost:3000/", ["http://localhost:3000"]],
    ["a number without the punctuation that ends its sentence", "Node 20.", ["20"]],
    ["an id, lower-cased", "ticket ABC-123", ["abc-123"]],
    ["words with digits in them", "x86_64 and arm64", ["x86_64", "arm64"]],
    ["a repeated number once", "3 retries, 3 workers", ["3"]],
  ])("finds %s", (_case, text, numbers) => {
    expect([...numbersIn(text)]).toEqual(numbers);
  });
});

describe("the number rule of duplicates: two texts carry the same numbers", () => {
  it.each([
    ["when they differ only in words", "Deploys take 5 minutes", "A deploy takes 5 minutes"],
    ["whatever the case and the final full stop", "Runs on Node 20", "runs on NODE 20."],
    ["when neither has any", "The cache is flushed on Sundays", "On Sundays the cache is flushed"],
  ])("yes, %s", (_case, first, second) => {
    expect(numbersIn(first)).toEqual(numbersIn(second));
  });

  it.each([
    ["when a number differs", "The staging API listens on port 8080", "The staging API listens on port 8081"],
    ["when a version differs in its last part", "Pinned to v1.2", "Pinned to v1.2.0"],
    ["when only one of them has a number", "Retries happen a few times", "Retries happen 3 times"],
  ])("no, %s", (_case, first, second) => {
    expect(numbersIn(first)).not.toEqual(numbersIn(second));
  });
});
