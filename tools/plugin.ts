import { z } from "zod";
import { HOST_NAMES, renderHostConfigs } from "../plugin/hosts/index.js";
import { bridgeLauncher } from "../src/core/paths.js";
import { hostConfig, hostTransport } from "../src/wire/hosts.js";
import { defineOperation } from "./operation.js";

const pluginInstall = defineOperation({
  name: "plugin_install",
  title: "MCP configuration for an agent host",
  description:
    "The files (and, where the host has one, the CLI command) that connect an agent host to Cairn as you: " +
    `${HOST_NAMES.join(", ")}; over \`stdio\` (the \`cairn mcp\` command) or \`http\` (\`/mcp\`). The key is never in them, only a ` +
    "reference to the CAIRN_API_KEY environment variable in the host's own syntax. With host and transport: that " +
    "one configuration; otherwise `{hosts: [...]}` with every match.",
  kind: "read",
  http: { method: "GET", path: "/plugin/install" },
  input: z.strictObject({
    host: z.enum(HOST_NAMES as [string, ...string[]]).optional().describe("default: every host"),
    transport: hostTransport.optional().describe("default: both"),
  }),
  output: z.union([hostConfig, z.object({ hosts: z.array(hostConfig) })]),
  handle({ services, caller }, input) {
    const context = { agentId: caller.agentId, url: services.site.url, keyVariable: "CAIRN_API_KEY", launcher: bridgeLauncher() };
    const configs = renderHostConfigs(context, input.host, input.transport);
    return input.host !== undefined && input.transport !== undefined && configs[0] ? configs[0] : { hosts: configs };
  },
});

export const pluginOperations = [pluginInstall];
