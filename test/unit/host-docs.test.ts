import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hostDocs, HOSTS_DOC_PATH } from "../generate/hosts.js";

describe("docs/hosts.md", () => {
  it("matches the host renderers (`npm run generate` writes it)", () => {
    expect(readFileSync(HOSTS_DOC_PATH, "utf8")).toBe(hostDocs());
  });
});
