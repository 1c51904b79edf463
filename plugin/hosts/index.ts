import { codex } from "./codex.js";
import { claudeCode, claudeDesktop, cursor, gemini, opencode, vscode, windsurf } from "./json-hosts.js";
import type { HostConfig, HostTransport } from "../../src/wire/hosts.js";
import type { HostContext, HostRenderer } from "./types.js";

export type { HostContext } from "./types.js";

/** One renderer per agent host, in the order they are listed. */
export const HOSTS: readonly HostRenderer[] = [claudeCode, claudeDesktop, cursor, vscode, codex, gemini, windsurf, opencode];
export const HOST_NAMES = HOSTS.map((renderer) => renderer.host);

/** The configurations for `host` (every host when omitted) and `transport` (both when omitted). */
export function renderHostConfigs(context: HostContext, host?: string, transport?: HostTransport): HostConfig[] {
  const transports: HostTransport[] = transport ? [transport] : ["stdio", "http"];
  return HOSTS.filter((renderer) => host === undefined || renderer.host === host).flatMap((renderer) =>
    transports.map((each) => renderer.render(context, each)),
  );
}
