import { parseArgs } from "node:util";
import { configOrExit } from "./common.js";
import { agentHelp } from "./help.js";
import { OwnerClient, ownerIdentity } from "./owner-client.js";
import { print, UsageError } from "./output.js";

interface AgentRecord {
  agent_id: string;
  display_name: string | null;
  role: string;
  created_at: string;
  last_seen_at: string | null;
  online: boolean;
  current_project: string | null;
  claimed_tasks: string[];
}

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
  const agents: AgentRecord[] = [];
  for (let cursor: string | null = ""; cursor !== null; ) {
    const query = new URLSearchParams({ limit: "500" });
    if (cursor !== "") query.set("cursor", cursor);
    const { body, response } = await client.json<AgentRecord[]>(`/agents?${query.toString()}`);
    agents.push(...body);
    cursor = response.headers.get("x-next-cursor");
  }
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
