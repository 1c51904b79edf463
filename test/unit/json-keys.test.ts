import { describe, expect, it } from "vitest";
import { keyProblem } from "../../src/core/json-keys.js";

// The check behind issue 25's "duplicate JSON keys accepted": one pass over text JSON.parse took.

const problemIn = (text: string) => {
  JSON.parse(text);
  return keyProblem(text)?.error ?? null;
};

describe("keys JSON.parse would silently merge or turn into a prototype", () => {
  it("finds a key twice in one object, with the path to it", () => {
    expect(problemIn('{"a":1,"a":2}')).toEqual({ path: "a", message: "duplicate key" });
    expect(problemIn('{"a":{"b":[1,{"c":1,"d":2,"c":3}]}}')).toEqual({ path: "a.b.1.c", message: "duplicate key" });
    expect(problemIn('[{"x":1},{"y":1},{"z":1,"z":1}]')).toEqual({ path: "2.z", message: "duplicate key" });
    expect(problemIn('{"k\\u0065y":1,"key":2}')).toEqual({ path: "key", message: "duplicate key" });
  });

  it("finds a __proto__ key however it is spelt", () => {
    expect(problemIn('{"a":[{"__proto__":{}}]}')).toEqual({ path: "a.0.__proto__", message: "__proto__ is not accepted as a key" });
    expect(problemIn('{"\\u005f_proto__":1}')).toEqual({ path: "__proto__", message: "__proto__ is not accepted as a key" });
  });

  it("passes the same key in sibling objects, and keys or braces inside string values", () => {
    expect(problemIn('{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":1}]}')).toBeNull();
    expect(problemIn('{"a":"{\\"a\\":1,\\"a\\":2}","b":"\\\\","c":"]},[{","d":"__proto__"}')).toBeNull();
    expect(problemIn('{"":1,"e":{"":2}}')).toBeNull();
    expect(problemIn("[1,2,[3,[4]],{}]")).toBeNull();
  });

  it("finds the repeat in a body 50,000 keys wide or 5,000 levels deep", () => {
    const wide = `{${Array.from({ length: 50_000 }, (_, index) => `"k${index}":${index}`).join(",")}}`;
    expect(problemIn(wide)).toBeNull();
    expect(problemIn(`${wide.slice(0, -1)},"k49999":0}`)).toEqual({ path: "k49999", message: "duplicate key" });
    const deep = `${"[".repeat(5_000)}{"a":1,"a":1}${"]".repeat(5_000)}`;
    expect(problemIn(deep)?.path).toBe(`${"0.".repeat(5_000)}a`);
  });
});
