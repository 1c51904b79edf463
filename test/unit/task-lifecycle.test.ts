import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { allowedFrom, TASK_TRANSITIONS, type TaskAction } from "../../src/wire/task-lifecycle.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** The table docs/decisions.md shows, one row per action, as the transition table says. */
const rows = (Object.keys(TASK_TRANSITIONS) as TaskAction[]).map((action) => {
  const { from, to, refusal } = TASK_TRANSITIONS[action];
  return `| ${action} | ${from.join(", ")} | ${to ?? "unchanged"} | ${refusal === null ? "never" : `409 \`${refusal}\``} |`;
});

describe("the task lifecycle", () => {
  it("is the table docs/decisions.md shows", () => {
    const lines = readFileSync(join(ROOT, "docs", "decisions.md"), "utf8").split("\n");
    const header = lines.indexOf("| action | legal from | leads to | otherwise |");
    expect(header).toBeGreaterThan(-1);
    const end = lines.indexOf("", header);
    expect(lines.slice(header + 2, end)).toEqual(rows);
  });

  it.each([
    ["claim", "open", true],
    ["claim", "claimed", false],
    ["complete", "claimed", true],
    ["complete", "open", false],
    ["reopen", "failed", true],
    ["reopen", "claimed", false],
    ["update", "completed", false],
    ["comment", "completed", true],
  ] as const)("allows %s from %s: %s", (action, status, allowed) => {
    expect(allowedFrom(action, status)).toBe(allowed);
  });
});
