import { z } from "zod";

// The MCP configuration of one agent host, as plugin/hosts renders it and plugin_install returns it.

export const hostTransport = z.enum(["stdio", "http"]);
export type HostTransport = z.output<typeof hostTransport>;

/**
 * A file the host reads (`path`, where `~` is the user's home). A host that reads a different path
 * per platform gets one file per platform, macOS first.
 */
const hostConfigFile = z.object({ path: z.string(), format: z.enum(["json", "toml"]), content: z.string() });

export const hostConfig = z
  .object({
    host: z.string(),
    transport: hostTransport,
    files: z.array(hostConfigFile),
    command: z.string().optional().describe("registers the server with the host's own CLI"),
  })
  .meta({ id: "HostConfig" });
export type HostConfig = z.output<typeof hostConfig>;
