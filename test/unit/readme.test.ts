import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { README_PATH, withRouteTable } from "../generate/readme.js";

describe("README", () => {
  it("lists every operation of the catalogue with its route and MCP tool (`npm run generate` writes it)", () => {
    const readme = readFileSync(README_PATH, "utf8");
    expect(withRouteTable(readme), "README.md has lost its route table's markers").toBe(readme);
  });

  it("opens with the install-and-run and the test commands", () => {
    const readme = readFileSync(README_PATH, "utf8");
    const firstBlock = readme.slice(readme.indexOf("```"), readme.indexOf("```", readme.indexOf("```") + 3));
    expect(firstBlock).toContain("npm ci && npm start");
    expect(firstBlock).toContain("npm test");
  });
});
