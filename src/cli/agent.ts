import { parseArgs } from "node:util";
import { AGENT_ID_PATTERN } from "../wire/ids.js";
import { roles, type Role } from "../wire/roles.js";
import { configOrExit, withGateway } from "./common.js";
import { agentHelp } from "./help.js";
import { print, UsageError } from "./output.js";

export async function agent(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { role: { type: "string", default: "agent" }, name: { type: "string" } },
  });
  const id = positionals[0];
  if (!id || positionals.length > 1) throw new UsageError(agentHelp);
  if (!AGENT_ID_PATTERN.test(id)) throw new UsageError(`invalid agent id ${id}: must match ${AGENT_ID_PATTERN.source}`);
  const config = configOrExit();
  if (action === "add") {
    const role = values.role as Role;
    if (!roles.includes(role) || role === "archivist") throw new UsageError("--role must be agent, owner or viewer");
    const created = await withGateway(config, { embeddings: false }, (gateway) => gateway.maintenance.createAgent(id, values.name ?? null, role));
    print(`agent ${created.agent_id} (${created.role})`);
    print(`api key: ${created.api_key}`);
    print("store the key now: it is not shown again");
    return;
  }
  if (action === "rotate-key") {
    const key = await withGateway(config, { embeddings: false }, (gateway) => gateway.maintenance.issueKey(id));
    print(`new api key for ${id}: ${key}`);
    return;
  }
  throw new UsageError(agentHelp);
}
