import { renderHostConfigs } from "../../plugin/hosts/index.js";

// docs/hosts.md, rendered by the same code as GET /plugin/install: `npm run generate` writes it,
// test/unit/host-docs.test.ts fails when the committed copy drifts from it.

export const HOSTS_DOC_PATH = new URL("../../docs/hosts.md", import.meta.url);

/** docs/hosts.md, rendered by the same code as GET /plugin/install, for an example agent. */
export function hostDocs(): string {
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
