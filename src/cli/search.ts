import { parseArgs } from "node:util";
import { configOrExit } from "./common.js";
import { searchHelp } from "./help.js";
import { OwnerClient, ownerIdentity } from "./owner-client.js";
import { print, UsageError } from "./output.js";

interface Hit {
  id: string;
  type: string;
  project: string | null;
  agent_id: string;
  content: string;
  similarity: number | null;
  match: string;
  tags: string[];
  updated_at: string;
}

const PREVIEW = 300;

function oneHit(hit: Hit): string {
  const similarity = hit.similarity === null ? "keyword" : `similarity ${hit.similarity.toFixed(2)}`;
  const where = hit.project ?? "global";
  const tags = hit.tags.length > 0 ? ` · ${hit.tags.map((tag) => `#${tag}`).join(" ")}` : "";
  const text = hit.content.replace(/\s+/g, " ").trim();
  const preview = text.length > PREVIEW ? `${text.slice(0, PREVIEW - 1)}…` : text;
  return `${hit.id.slice(0, 8)}  ${hit.type} · ${where} · ${hit.agent_id} · ${hit.updated_at.slice(0, 10)} · ${similarity} (${hit.match})${tags}\n  ${preview}`;
}

/** `cairn search QUERY`: memory search as the owner, printed for a person or as JSON. */
export async function search(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      limit: { type: "string" },
      project: { type: "string" },
      type: { type: "string" },
      tag: { type: "string" },
      code: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
  const q = positionals.join(" ").trim();
  if (q === "") throw new UsageError(searchHelp);
  if (values.limit !== undefined && !/^\d+$/.test(values.limit)) throw new UsageError("--limit must be a whole number");
  const query = new URLSearchParams({ q });
  for (const key of ["limit", "project", "type", "tag"] as const) {
    const value = values[key];
    if (value !== undefined) query.set(key, value);
  }
  if (values.code) query.set("include_code", "true");
  const client = new OwnerClient(ownerIdentity(configOrExit()));
  const { body: hits } = await client.json<Hit[]>(`/memory/search?${query.toString()}`);
  if (values.json) print(JSON.stringify(hits, null, 2));
  else if (hits.length === 0) print("no matches");
  else print(hits.map(oneHit).join("\n\n"));
}
