import { parseArgs } from "node:util";
import { configOrExit } from "./common.js";
import { agentHelp } from "./help.js";
import { OwnerClient, ownerIdentity } from "./owner-client.js";
import { print, UsageError } from "./output.js";

/** More than a server keeps (MAX_AGENTS is at most 100,000): every agent. */
const EVERY_AGENT = 1_000_000;

/** Columns padded to their widest cell; the last one is left ragged. */
function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  ").trimEnd()).join("\n");
}

/** `cairn agent list`: every agent the server knows, through its API, as a table or JSON. */
export async function agentList(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean", default: false } } });
  if (positionals.length > 0) throw new UsageError(agentHelp);
  const client = new OwnerClient(ownerIdentity(configOrExit()));
  const agents = await client.operations.all("agent_list", { limit: 500 }, EVERY_AGENT);
  if (values.json) {
    print(JSON.stringify(agents, null, 2));
    return;
  }
  const rows = agents.map((agent) => [
    agent.agent_id,
    agent.role,
    agent.online ? "online" : "offline",
    agent.last_seen_at ?? "never",
    agent.current_project ?? "-",
    String(agent.claimed_tasks.length),
    agent.display_name ?? "",
  ]);
  print(table([["AGENT", "ROLE", "STATUS", "LAST SEEN", "PROJECT", "CLAIMED", "NAME"], ...rows]));
}
