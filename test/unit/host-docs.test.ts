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
    "Generated from `plugin/hosts/` (the renderers behind `GET /plugin/install` and `GET /onboard`) for an",
    "agent `builder` on `http://127.0.0.1:8470`, with cairn installed globally at `/usr/local/bin/cairn`; a",
    "test fails when this file drifts from them. The stdio configurations run the installed bridge by",
    "absolute path, so they work from any directory and fetch nothing. Ask your server for your own:",
    "`GET /plugin/install?host=<host>&transport=<stdio|http>` (its stdio configurations run the server's",
    "own installation, for hosts on the server's machine). The key is never in a config: export it as",
    "`CAIRN_API_KEY` where the host starts — or let onboarding (`curl -s URL/onboard | sh`) write the",
    "config, which points the bridge at the key's file instead (`CAIRN_KEY_FILE`), so nothing is exported.",
  ];
  let host = "";
  const context = { agentId: "builder", url: "http://127.0.0.1:8470", keyVariable: "CAIRN_API_KEY", launcher: ["/usr/local/bin/cairn", "mcp"] };
  for (const config of renderHostConfigs(context)) {
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
