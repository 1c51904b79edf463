import { describe, expect, it } from "vitest";
import { parseIfMatch } from "../../tools/schemas.js";

describe("parseIfMatch: the version an If-Match header expects", () => {
  it.each([
    ["a bare number", "3", 3],
    ["a quoted number, as an ETag is sent", '"3"', 3],
    ["a weak ETag", 'W/"3"', 3],
    ["white space around it", ' "3" ', 3],
    ["leading zeros", '"007"', 7],
    ["fifteen digits", "123456789012345", 123456789012345],
  ])("reads %s", (_form, header, version) => {
    expect(parseIfMatch(header)).toBe(version);
  });

  it.each([
    ["an empty header", ""],
    ["an empty ETag", '""'],
    ["the wildcard", "*"],
    ["a list of ETags", '"3", "4"'],
    ["a negative number", '"-1"'],
    ["a fraction", '"1.5"'],
    ["a lower-case weak prefix", 'w/"3"'],
    ["sixteen digits, beyond a safe integer's precision", "1234567890123456"],
  ])("names no version in %s", (_form, header) => {
    expect(parseIfMatch(header)).toBeNull();
  });
});
