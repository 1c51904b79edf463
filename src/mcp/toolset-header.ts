/** The header naming an MCP session's tool set; its own module so the stdio bridge loads nothing else of the server. */
export const TOOLSET_HEADER = "X-MCP-Toolset";
