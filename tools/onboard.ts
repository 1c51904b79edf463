import { z } from "zod";
import { HOST_NAMES } from "../plugin/hosts/index.js";
import { onboardScript } from "../plugin/onboard.js";
import { bridgeLauncher } from "../src/core/paths.js";
import { defineOperation } from "./operation.js";
import { agentId, projectId } from "../src/wire/fields.js";

const onboard = defineOperation({
  name: "onboard_script",
  title: "Onboarding script",
  description:
    "A POSIX sh script (`curl -s URL/onboard?project=web | sh`, run in a project directory) that registers an " +
    "agent for this user, machine and directory (or `agent`; or reuses the key it stored), keeps its key in a 0600 " +
    "file under ~/.cairn/agents, records the directory's agent, joins `project` (creating it if needed), and writes " +
    "the MCP configuration of `host` (detected when omitted: claude, cursor, codex, gemini, opencode, windsurf, VS " +
    "Code; else claude-code): the installed cairn bridge by absolute path, reading the key from its file, so " +
    "nothing needs exporting (HTTP when cairn is not on the machine). An existing configuration file gets Cairn's " +
    "entry merged in, everything else kept as it was and the original copied beside it (<file>.cairn-<time>.bak); " +
    "one that does not parse is left alone and the script prints the entry to add by hand and exits 1. It uses the " +
    "registration key in CAIRN_REGISTRATION_KEY when the server requires one. Running it again changes nothing.",
  kind: "read",
  access: "public",
  http: { method: "GET", path: "/onboard", contentType: "text/x-shellscript" },
  input: z.strictObject({
    project: projectId.optional().describe("a project id to join"),
    host: z.enum(HOST_NAMES as [string, ...string[]]).optional().describe("the agent host to configure; default: detected by the script"),
    agent: agentId.optional().describe("the agent id to use; default: user-machine-directory"),
  }),
  output: z.string().describe("the script"),
  handle({ services }, input) {
    return onboardScript({
      url: services.site.url,
      project: input.project ?? null,
      host: input.host ?? null,
      agent: input.agent ?? null,
      serverLauncher: bridgeLauncher(),
    });
  },
});

export const onboardOperations = [onboard];
