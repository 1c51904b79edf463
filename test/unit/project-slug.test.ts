import { describe, expect, it } from "vitest";
import { projectSlug } from "../../src/services/projects.js";

describe("projectSlug: a project's id from its name", () => {
  it.each([
    ["lower-cases and joins words with a dash", "Parity Project", "parity-project"],
    ["turns a run of other characters into one dash", "C++ / Rust", "c-rust"],
    ["turns dots into dashes", "a.b.c", "a-b-c"],
    ["keeps underscores", "under_score", "under_score"],
    ["trims spaces and punctuation at either end", "  Apollo Launch!  ", "apollo-launch"],
    ["drops leading dashes and underscores, so the id starts with a letter or digit", "__-init__", "init__"],
    ["reads compatibility forms as their plain letters", "Ｆｕｌｌ ﬁle", "full-file"],
    ["keeps at most 64 characters", "x".repeat(70), "x".repeat(64)],
    ["never ends in a dash where the cut falls", `${"x".repeat(63)} y`, "x".repeat(63)],
    ["is empty for a name with no Latin letter or digit, which the caller refuses", "日本語", ""],
  ])("%s", (_rule, name, slug) => {
    expect(projectSlug(name)).toBe(slug);
  });
});
