import { parseArgs } from "node:util";
import type { InputOf } from "../client/operations.js";
import type { SearchHit } from "../wire/memory.js";
import { configOrExit } from "./common.js";
import { searchHelp } from "./help.js";
import { OwnerClient, ownerIdentity } from "./owner-client.js";
import { print, UsageError } from "./output.js";


const PREVIEW = 300;

function oneHit(hit: SearchHit): string {
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
  // Full hits, not the compact form: what the CLI prints.
  const input: Omit<InputOf<"memory_search">, "compact"> = { q, ...(values.code ? { include_code: true } : {}) };
  if (values.limit !== undefined) input.limit = Number(values.limit);
  if (values.project !== undefined) input.project = values.project;
  if (values.tag !== undefined) input.tag = values.tag;
  // The server refuses a type it does not know, with the list of those it does.
  if (values.type !== undefined) input.type = values.type as InputOf<"memory_search">["type"];
  const client = new OwnerClient(ownerIdentity(configOrExit()));
  const hits = await client.operations.call("memory_search", input);
  if (values.json) print(JSON.stringify(hits, null, 2));
  else if (hits.length === 0) print("no matches");
  else print(hits.map(oneHit).join("\n\n"));
}
