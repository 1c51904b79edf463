import { bridgeEnv, httpHeaders, json, launch, shellWord, type HostContext, type HostRenderer } from "./types.js";

const mcpUrl = (context: HostContext): string => `${context.url}/mcp`;

export const claudeCode: HostRenderer = {
  host: "claude-code",
  // Claude Code reads .mcp.json as plain JSON.
  syntax: "json",
  render(context, transport) {
    // Claude Code expands ${VAR} in .mcp.json.
    const key = `\${${context.keyVariable}}`;
    const server =
      transport === "stdio" ? { ...launch(context), env: bridgeEnv(context, key) } : { type: "http", url: mcpUrl(context), headers: httpHeaders(context, key) };
    const envFlags = Object.entries(bridgeEnv(context, "")).map(([name, value]) =>
      name === "CAIRN_API_KEY" ? `--env CAIRN_API_KEY="$${context.keyVariable}"` : `--env ${name}=${shellWord(value)}`,
    );
    const command =
      transport === "stdio"
        ? `claude mcp add cairn ${envFlags.join(" ")} -- ${context.launcher.map(shellWord).join(" ")}`
        : `claude mcp add --transport http cairn ${shellWord(mcpUrl(context))} --header ${shellWord(`X-Agent-ID: ${context.agentId}`)} --header "X-API-Key: $${context.keyVariable}"`;
    return { host: "claude-code", transport, files: [{ path: ".mcp.json", format: "json", content: json({ mcpServers: { cairn: server } }) }], command };
  },
};

export const claudeDesktop: HostRenderer = {
  host: "claude-desktop",
  // Claude Desktop reads plain JSON.
  syntax: "json",
  render(context, transport) {
    // Claude Desktop starts local commands only: over "http" the bridge itself is the HTTP client
    // (CAIRN_URL is the remote server), so no package is fetched at run time. It does not expand
    // variables, so without a key file a shell reads the key from the environment it was given.
    const { command, args } = launch(context);
    const server =
      context.keyFile !== undefined
        ? { command, args, env: bridgeEnv(context, "") }
        : {
            command: "/bin/sh",
            args: ["-c", `CAIRN_API_KEY="$${context.keyVariable}" exec ${context.launcher.map(shellWord).join(" ")}`],
            env: { CAIRN_URL: context.url, CAIRN_AGENT_ID: context.agentId },
          };
    const content = json({ mcpServers: { cairn: server } });
    return {
      host: "claude-desktop",
      transport,
      files: [
        { path: "~/Library/Application Support/Claude/claude_desktop_config.json", format: "json", content },
        { path: "~/.config/Claude/claude_desktop_config.json", format: "json", content },
      ],
    };
  },
};

export const cursor: HostRenderer = {
  host: "cursor",
  // Cursor is not known to read comments in mcp.json: a file with them is left for a hand edit.
  syntax: "json",
  render(context, transport) {
    const key = `\${env:${context.keyVariable}}`;
    const server = transport === "stdio" ? { ...launch(context), env: bridgeEnv(context, key) } : { url: mcpUrl(context), headers: httpHeaders(context, key) };
    return { host: "cursor", transport, files: [{ path: ".cursor/mcp.json", format: "json", content: json({ mcpServers: { cairn: server } }) }] };
  },
};

export const vscode: HostRenderer = {
  host: "vscode",
  // VS Code reads mcp.json as JSONC, like its settings: comments and trailing commas.
  syntax: "jsonc",
  render(context, transport) {
    const key = `\${env:${context.keyVariable}}`;
    const server =
      transport === "stdio"
        ? { type: "stdio", ...launch(context), env: bridgeEnv(context, key) }
        : { type: "http", url: mcpUrl(context), headers: httpHeaders(context, key) };
    return { host: "vscode", transport, files: [{ path: ".vscode/mcp.json", format: "json", content: json({ servers: { cairn: server } }) }] };
  },
};

export const gemini: HostRenderer = {
  host: "gemini",
  // Gemini CLI strips comments before JSON.parse; trailing commas still fail.
  syntax: "json-with-comments",
  render(context, transport) {
    // Gemini CLI expands $VAR in settings values.
    const key = `$${context.keyVariable}`;
    const server = transport === "stdio" ? { ...launch(context), env: bridgeEnv(context, key) } : { httpUrl: mcpUrl(context), headers: httpHeaders(context, key) };
    return { host: "gemini", transport, files: [{ path: ".gemini/settings.json", format: "json", content: json({ mcpServers: { cairn: server } }) }] };
  },
};

export const windsurf: HostRenderer = {
  host: "windsurf",
  // Windsurf reads plain JSON.
  syntax: "json",
  render(context, transport) {
    const key = `\${env:${context.keyVariable}}`;
    const server = transport === "stdio" ? { ...launch(context), env: bridgeEnv(context, key) } : { serverUrl: mcpUrl(context), headers: httpHeaders(context, key) };
    return { host: "windsurf", transport, files: [{ path: "~/.codeium/windsurf/mcp_config.json", format: "json", content: json({ mcpServers: { cairn: server } }) }] };
  },
};

export const opencode: HostRenderer = {
  host: "opencode",
  // opencode reads JSONC: comments and trailing commas.
  syntax: "jsonc",
  render(context, transport) {
    const key = `{env:${context.keyVariable}}`;
    const server =
      transport === "stdio"
        ? { type: "local", command: context.launcher, environment: bridgeEnv(context, key), enabled: true }
        : { type: "remote", url: mcpUrl(context), headers: httpHeaders(context, key), enabled: true };
    return {
      host: "opencode",
      transport,
      files: [{ path: "opencode.json", format: "json", content: json({ $schema: "https://opencode.ai/config.json", mcp: { cairn: server } }) }],
    };
  },
};
