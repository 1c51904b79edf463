import { describe, expect, it } from "vitest";
import { requestHash } from "../../src/services/idempotency.js";

// An Idempotency-Key replays the first response only for the same request: the hash is of the
// operation and its input as canonical JSON (object keys sorted), so what JSON cannot tell apart
// is the same request, and what it can is not.

type Request = [operation: string, input: unknown];

describe("requestHash: when two requests are the same request", () => {
  it.each<[string, Request, Request]>([
    ["keys in another order", ["memory_write", { content: "x", tags: ["a"] }], ["memory_write", { tags: ["a"], content: "x" }]],
    ["keys of a nested object in another order", ["task_create", { title: "t", output: { pr: 1, files: [] } }], ["task_create", { output: { files: [], pr: 1 }, title: "t" }]],
    ["keys of objects inside a list in another order", ["archivist_merge", { sources: [{ id: "a", version: 1 }] }], ["archivist_merge", { sources: [{ version: 1, id: "a" }] }]],
    ["a field set to undefined and the field left out", ["memory_write", { content: "x", project: undefined }], ["memory_write", { content: "x" }]],
  ])("the same: %s", (_case, [operationA, inputA], [operationB, inputB]) => {
    expect(requestHash(operationA, inputA)).toBe(requestHash(operationB, inputB));
  });

  it.each<[string, Request, Request]>([
    ["a list in another order", ["memory_write", { content: "x", tags: ["a", "b"] }], ["memory_write", { content: "x", tags: ["b", "a"] }]],
    ["null and a field left out", ["memory_write", { content: "x", project: null }], ["memory_write", { content: "x" }]],
    ["a number and the same digits as a string", ["memory_write", { content: "x", confidence: 1 }], ["memory_write", { content: "x", confidence: "1" }]],
    ["a different nested value", ["task_create", { title: "t", output: { pr: 1 } }], ["task_create", { title: "t", output: { pr: 2 } }]],
    ["the same input to another operation", ["memory_write", { content: "x" }], ["task_create", { content: "x" }]],
  ])("different: %s", (_case, [operationA, inputA], [operationB, inputB]) => {
    expect(requestHash(operationA, inputA)).not.toBe(requestHash(operationB, inputB));
  });

  it("is a SHA-256 in hex", () => {
    expect(requestHash("memory_write", { content: "x" })).toMatch(/^[0-9a-f]{64}$/);
  });
});
