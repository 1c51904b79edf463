import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkByteSize } from "../../src/core/byte-size.js";
import { AppError, InternalError, invalid } from "../../src/core/errors.js";
import { SchemaTooNewError } from "../../src/store/migrations.js";
import { eventList, eventPoint } from "../../tools/events.js";
import { memoryUpdate } from "../../tools/memory.js";
import { parseInput } from "../../tools/operation.js";
import { idempotencyKey, leaseToken } from "../../tools/gateway.js";
import { ifMatchVersion, parseIfMatch } from "../../tools/schemas.js";
import { parseValue, refuse, validationError } from "../../tools/validation.js";

function caught(action: () => unknown): AppError {
  try {
    action();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

const ENTRY = "0badc0de-0000-4000-8000-000000000000";

describe("If-Match, parsed at the edge", () => {
  it.each([
    ["3", 3],
    ['"3"', 3],
    ['W/"3"', 3],
    [' "12" ', 12],
    ["0", 0],
    ['"3', 3],
    ["999999999999999", 999_999_999_999_999],
  ])("reads %j as version %j", (header, version) => {
    expect(parseIfMatch(header)).toBe(version);
    expect(ifMatchVersion.parse(header)).toBe(version);
  });

  it.each(["banana", "", "*", "W/", "-1", "3.0", '"3" "4"', "1234567890123456"])("finds no version in %j", (header) => {
    expect(parseIfMatch(header)).toBeNull();
  });

  it("answers an unparsable value with 400 and the contract's detail, not 422", () => {
    const error = caught(() => parseInput(memoryUpdate, { id: ENTRY, if_match: "banana" }));
    expect(error.status).toBe(400);
    expect(error.toBody()).toStrictEqual({ detail: "unparsable if-match header", code: "BAD_REQUEST" });
  });

  it("hands the service the version as a number", () => {
    expect(parseInput(memoryUpdate, { id: ENTRY, if_match: 'W/"7"' })).toMatchObject({ if_match: 7 });
  });

  it("lets ordinary problems of the same request answer 422 first, without the refused value", () => {
    const error = caught(() => parseInput(memoryUpdate, { id: ENTRY, if_match: "banana", colour: "red" }));
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.errors).toEqual([{ path: "colour", message: expect.stringMatching(/^unknown field; the fields are id, if_match, content,/) as string }]);
  });

  it("still reports a value over 64 characters as 422 at its path", () => {
    const error = caught(() => parseInput(memoryUpdate, { id: ENTRY, if_match: "1".repeat(65) }));
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.errors?.map((problem) => problem.path)).toEqual(["if_match"]);
  });
});

describe("since on GET /events, parsed at the edge", () => {
  it("reads seq:<n> as a point right after event n", () => {
    expect(eventPoint.parse("seq:42")).toEqual({ seq: 42 });
  });

  it("reads any RFC 3339 time as a UTC time with milliseconds", () => {
    expect(eventPoint.parse("2026-11-22T11:04:05+01:00")).toEqual({ at: "2026-11-22T10:04:05.000Z" });
  });

  it.each(["yesterday", "seq:", "seq:-1", "seq:1234567890123456"])("refuses %j with 422 at since", (since) => {
    const error = caught(() => parseInput(eventList, { since }));
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.errors).toEqual([{ path: "since", message: "expected an RFC 3339 timestamp or seq:<n>" }]);
  });
});

describe("the idempotency key, one rule for REST and MCP", () => {
  it("passes a key of 1 to 200 characters, and its absence", () => {
    expect(parseValue(idempotencyKey, "k".repeat(200), "Idempotency-Key")).toBe("k".repeat(200));
    expect(parseValue(idempotencyKey, undefined, "Idempotency-Key")).toBeUndefined();
  });

  it.each([
    ["", "must be 1 to 200 characters"],
    ["k".repeat(201), "must be 1 to 200 characters"],
    [42, "must be a string of 1 to 200 characters"],
    [null, "must be a string of 1 to 200 characters"],
  ])("refuses %j with 422 at the path the transport names", (key, message) => {
    const error = caught(() => parseValue(idempotencyKey, key, "_meta.idempotency_key"));
    expect(error.toBody()).toStrictEqual({ detail: "request validation failed", code: "VALIDATION_FAILED", errors: [{ path: "_meta.idempotency_key", message }] });
  });
});

describe("the archivist lease header", () => {
  it("reads a token as its number", () => {
    expect(leaseToken.parse("17")).toBe(17);
    expect(leaseToken.parse(undefined)).toBeUndefined();
  });

  it.each(["", "abc", "-3", "1.5", "1234567890123456"])("turns malformed %j into a token no lease has, so a fenced write is refused as stale", (header) => {
    expect(leaseToken.parse(header)).toBe(-1);
  });
});

describe("refusals from a schema", () => {
  const schema = z.strictObject({
    header: z.string().transform((value, context) => (value === "ok" ? value : refuse(context, "PRECONDITION_FAILED", "not ok"))),
    count: z.number().optional(),
  });
  const issuesOf = (input: unknown) => schema.safeParse(input).error?.issues ?? [];

  it("answer with their own code and detail when nothing else is wrong", () => {
    expect(validationError(issuesOf({ header: "no" })).toBody()).toStrictEqual({ detail: "not ok", code: "PRECONDITION_FAILED" });
  });

  it("give way to the 422 when something else is wrong", () => {
    const error = validationError(issuesOf({ header: "no", count: "three" }));
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.errors?.map((problem) => problem.path)).toEqual(["count"]);
  });
});

describe("the byte-size limit", () => {
  it("accepts text of exactly the limit", () => {
    expect(() => checkByteSize("abcd", 4, "content exceeds")).not.toThrow();
  });

  it("counts UTF-8 bytes, not characters", () => {
    const error = caught(() => checkByteSize("éé", 3, "content exceeds"));
    expect(error.status).toBe(413);
    expect(error.toBody()).toStrictEqual({ detail: "content exceeds 3 bytes", code: "PAYLOAD_TOO_LARGE" });
  });

  it("keeps the verb its subject needs", () => {
    expect(caught(() => checkByteSize("{}", 1, "details exceed")).detail).toBe("details exceed 1 bytes");
  });
});

describe("validation errors with a detail of their own", () => {
  it("keep the generic detail unless one is given", () => {
    expect(invalid("cursor", "invalid cursor").detail).toBe("request validation failed");
    expect(invalid("agent_id", "change AGENT_KEYS and restart instead", "this agent's key is set in AGENT_KEYS").toBody()).toStrictEqual({
      detail: "this agent's key is set in AGENT_KEYS",
      code: "VALIDATION_FAILED",
      errors: [{ path: "agent_id", message: "change AGENT_KEYS and restart instead" }],
    });
  });
});

describe("internal errors", () => {
  it("are a family of their own with a kind, never an AppError", () => {
    const error = new InternalError("invariant", "afterCommit outside a write transaction");
    expect(error).not.toBeInstanceOf(AppError);
    expect(error).toMatchObject({ name: "InternalError", kind: "invariant", message: "afterCommit outside a write transaction" });
  });

  it("include a database newer than the code, as a setup problem", () => {
    const error = new SchemaTooNewError(9, 4);
    expect(error).toBeInstanceOf(InternalError);
    expect(error).toMatchObject({ name: "SchemaTooNewError", kind: "setup" });
  });
});
