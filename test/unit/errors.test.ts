import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError, errorCodes, errorStatus, forbidden, internalError, invalid, notFound, type ErrorCode } from "../../src/core/errors.js";
import { memoryWrite } from "../../tools/memory.js";
import { defineOperation, parseInput } from "../../tools/operation.js";

const contractStatuses: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UPSTREAM_ERROR: 502,
  UNAVAILABLE: 503,
};

function caught(action: () => unknown): AppError {
  try {
    action();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

describe("AppError", () => {
  it("maps each code to the status in CONTRACT §2.1", () => {
    expect(errorStatus).toEqual(contractStatuses);
    for (const code of errorCodes) expect(new AppError(code, "x").status).toBe(contractStatuses[code]);
  });

  it("serialises to exactly {detail, code}", () => {
    const body = new AppError("CONFLICT", "task not open").toBody();
    expect(body).toStrictEqual({ detail: "task not open", code: "CONFLICT" });
  });

  it("adds errors for validation failures", () => {
    const body = invalid("tags.0", "too long").toBody();
    expect(body).toStrictEqual({
      detail: "request validation failed",
      code: "VALIDATION_FAILED",
      errors: [{ path: "tags.0", message: "too long" }],
    });
  });

  it("adds extra fields such as current_version", () => {
    const body = new AppError("PRECONDITION_FAILED", "version does not match if-match", { extra: { current_version: 3 } }).toBody();
    expect(body).toStrictEqual({ detail: "version does not match if-match", code: "PRECONDITION_FAILED", current_version: 3 });
  });

  it("keeps retry-after and cause out of the body", () => {
    const error = new AppError("RATE_LIMITED", "rate limit exceeded", { retryAfter: 7, cause: new Error("secret") });
    expect(error.retryAfter).toBe(7);
    expect(error.toBody()).toStrictEqual({ detail: "rate limit exceeded", code: "RATE_LIMITED" });
  });

  it("builds the common errors with their codes", () => {
    expect(notFound("memory entry").toBody()).toStrictEqual({ detail: "memory entry not found", code: "NOT_FOUND" });
    expect(forbidden("viewers cannot make changes").status).toBe(403);
    expect(internalError().toBody()).toStrictEqual({ detail: "internal server error", code: "INTERNAL" });
  });
});

describe("literal error details in the source", () => {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const files = ["src", "tools"].flatMap((folder) =>
    readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
      .map((entry) => join(entry.parentPath, entry.name)),
  );
  const details = files.flatMap((file) =>
    [
      ...readFileSync(file, "utf8").matchAll(
        /(?:new AppError\(\s*"[A-Z_]+",\s*|\b(?:forbidden|conflict|notFound)\(\s*)(["`])((?:(?!\1)[^\\]|\\.)*)\1/g,
      ),
    ].map((match) => match[2] as string),
  );

  it("are found", () => {
    expect(details).toContain("invalid credentials");
  });

  it("are lower-case sentences without a final period", () => {
    for (const detail of details) {
      expect(detail, detail).toMatch(/^[^A-Z]/);
      expect(detail, detail).not.toMatch(/\.$/);
    }
  });
});

describe("parseInput", () => {
  it("returns the parsed input, defaults applied", () => {
    const nested = defineOperation({
      name: "test_defaults",
      title: "t",
      description: "d",
      kind: "read",
      access: "public",
      http: { method: "GET", path: "/t" },
      input: z.strictObject({ limit: z.number().int().default(50) }),
      output: z.object({}),
      handle: () => ({}),
    });
    expect(parseInput(nested, {})).toEqual({ limit: 50 });
  });

  it("reports one error per unknown field, each at its own path", () => {
    const error = caught(() => parseInput(memoryWrite, { content: "x", colour: "red", size: 3 }));
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.status).toBe(422);
    const fields = "content, type, scope, project, tags, confidence, parents, expires_at, allow_duplicate, source, compact";
    expect(error.errors).toEqual([
      { path: "colour", message: `unknown field; the fields are ${fields}` },
      { path: "size", message: `unknown field; the fields are ${fields}` },
    ]);
  });

  it("says a field left out is required, and what it takes", () => {
    const error = caught(() => parseInput(memoryWrite, { tags: ["a"] }));
    expect(error.errors).toEqual([{ path: "content", message: "required (string)" }]);
  });

  it("names the field a guess was near: a longer or shorter name, or one a typo away", () => {
    const error = caught(() => parseInput(memoryWrite, { content: "x", contents: "x", tag: ["a"], Scpoe: "agent", allow_duplicates_please: true }));
    expect(error.errors).toEqual([
      { path: "contents", message: "unknown field; did you mean content?" },
      { path: "tag", message: "unknown field; did you mean tags?" },
      { path: "Scpoe", message: "unknown field; did you mean scope?" },
      { path: "allow_duplicates_please", message: "unknown field; did you mean allow_duplicate?" },
    ]);
  });

  it("guesses nothing from a name too short to mean something", () => {
    const error = caught(() => parseInput(memoryWrite, { content: "x", t: 1, ci: 2 }));
    expect(error.errors?.map((problem) => problem.message.split(";")[1]?.trim())).toEqual([expect.stringMatching(/^the fields are content,/) as string, expect.stringMatching(/^the fields are content,/) as string]);
  });

  it("names the fields for the first few unknown ones only, and not for a name too long to be a guess", () => {
    const stray = Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`stray${index}`, index]));
    const long = "x".repeat(65);
    const error = caught(() => parseInput(memoryWrite, { content: "x", [long]: 1, ...stray }));
    const messages = error.errors?.map((problem) => problem.message) ?? [];
    expect(messages).toHaveLength(13);
    expect(messages.filter((message) => message === "unknown field")).toHaveLength(5);
    expect(error.errors?.find((problem) => problem.path === long)?.message).toBe("unknown field");
  });

  it("reports unknown fields of nested objects with the full path", () => {
    const nested = defineOperation({
      name: "test_nested",
      title: "t",
      description: "d",
      kind: "create",
      access: "public",
      http: { method: "POST", path: "/t" },
      input: z.strictObject({ outer: z.strictObject({ inner: z.string() }) }),
      output: z.object({}),
      handle: () => ({}),
    });
    const error = caught(() => parseInput(nested, { outer: { inner: "x", stray: 1 } }));
    expect(error.errors).toEqual([{ path: "outer.stray", message: "unknown field" }]);
  });

  it("reports wrong types at dotted paths, array indices included", () => {
    const error = caught(() => parseInput(memoryWrite, { content: "x", tags: ["ok", 7], confidence: "high" }));
    const paths = error.errors?.map((problem) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(["tags.1", "confidence"]));
    expect(paths).toHaveLength(2);
    for (const problem of error.errors ?? []) expect(problem.message).not.toBe("");
  });

  it("reports a missing required field at its path", () => {
    const error = caught(() => parseInput(memoryWrite, {}));
    expect(error.errors?.map((problem) => problem.path)).toEqual(["content"]);
  });
});
