import { homedir } from "node:os";

// The rules shared by the server's settings (config.ts, built on zod) and the few a client of a
// running server reads without zod (src/cli/client-settings.ts): one definition for both readers.

export const MCP_TOOLSETS = ["core", "standard", "all"] as const;

/** `~` and `~/…` as the user's home directory. */
export const expandHome = (path: string): string => (path === "~" || path.startsWith("~/") ? homedir() + path.slice(1) : path);
