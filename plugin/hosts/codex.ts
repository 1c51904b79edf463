import type { HostRenderer } from "./types.js";

/** A TOML basic string. */
const toml = (value: string): string => JSON.stringify(value);

export const codex: HostRenderer = {
  host: "codex",
  syntax: "toml",
  render(context, transport) {
    // Codex passes named variables through from its own environment (env_vars, env_http_headers).
    const [command = "cairn", ...args] = context.launcher;
    const env = [`CAIRN_URL = ${toml(context.url)}`, `CAIRN_AGENT_ID = ${toml(context.agentId)}`];
    if (context.keyFile !== undefined) env.push(`CAIRN_KEY_FILE = ${toml(context.keyFile)}`);
    const lines =
      transport === "stdio"
        ? [
            "[mcp_servers.cairn]",
            `command = ${toml(command)}`,
            `args = [${args.map(toml).join(", ")}]`,
            `env = { ${env.join(", ")} }`,
            ...(context.keyFile === undefined ? [`env_vars = [${toml(context.keyVariable)}]`] : []),
          ]
        : [
            "[mcp_servers.cairn]",
            `url = ${toml(`${context.url}/mcp`)}`,
            `http_headers = { "X-Agent-ID" = ${toml(context.agentId)} }`,
            `env_http_headers = { "X-API-Key" = ${toml(context.keyVariable)} }`,
          ];
    return { host: "codex", transport, files: [{ path: "~/.codex/config.toml", format: "toml", content: `${lines.join("\n")}\n` }] };
  },
};
