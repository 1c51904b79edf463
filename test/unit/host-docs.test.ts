import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderHostConfigs } from "../../plugin/hosts/index.js";

const docsPath = join(import.meta.dirname, "..", "..", "docs", "hosts.md");

/** docs/hosts.md, rendered by the same code as GET /plugin/install, for an example agent. */
function hostDocs(): string {
  const parts = [
    "# Agent host configuration",
    "",
    "Generated from `plugin/hosts/` (the renderers behind `GET /plugin/install`) for an agent `builder`",
    "on `http://127.0.0.1:8470`; a test fails when this file drifts from them. Ask your server for",
    "your own: `GET /plugin/install?host=<host>&transport=<stdio|http>`. The key is never in a",
    "config: export it as `CAIRN_API_KEY` where the host starts.",
  ];
  let host = "";
  for (const config of renderHostConfigs({ agentId: "builder", url: "http://127.0.0.1:8470", keyVariable: "CAIRN_API_KEY" })) {
    if (config.host !== host) {
      host = config.host;
      parts.push("", `## ${host}`);
    }
    for (const file of config.files) parts.push("", `${config.transport}, in \`${file.path}\`:`, "", `\`\`\`${file.format}`, file.content.trimEnd(), "```");
    if (config.command) parts.push("", "or:", "", "```sh", config.command, "```");
  }
  return `${parts.join("\n")}\n`;
}

describe("docs/hosts.md", () => {
  it("matches the host renderers (regenerate with UPDATE_DOCS=1)", () => {
    const expected = hostDocs();
    if (process.env.UPDATE_DOCS) {
      writeFileSync(docsPath, expected);
      return;
    }
    expect(readFileSync(docsPath, "utf8")).toBe(expected);
  });
});
