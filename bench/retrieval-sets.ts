// The retrieval benchmark's data sets (bench/data/README.md), read into one shape: documents in
// groups (a group becomes a project, and its queries search only it) and queries naming the
// documents that answer them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { packageRoot } from "../src/core/paths.js";

interface RetrievalDoc {
  key: string;
  group: string;
  content: string;
}

interface RetrievalQuery {
  q: string;
  group: string;
  type: string;
  relevant: string[];
}

export interface RetrievalSet {
  name: string;
  docs: RetrievalDoc[];
  queries: RetrievalQuery[];
}

const dataDir = join(packageRoot, "bench", "data");

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface LocomoSample {
  sample_id: string;
  conversation: Record<string, string | LocomoTurn[]>;
  qa: { question: string; evidence?: string[]; category: number }[];
}

// The categories as the data set numbers them (its paper's table orders them differently).
const LOCOMO_CATEGORIES: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial" };

/** Every turn is an entry ("Speaker: text", with a shared photo's caption); every question with evidence a query. */
export function loadLocomo(): RetrievalSet {
  const samples = JSON.parse(gunzipSync(readFileSync(join(dataDir, "locomo", "locomo10.json.gz"))).toString("utf8")) as LocomoSample[];
  const docs: RetrievalDoc[] = [];
  const queries: RetrievalQuery[] = [];
  for (const sample of samples) {
    const group = sample.sample_id;
    const keys = new Set<string>();
    for (const [name, value] of Object.entries(sample.conversation)) {
      if (!/^session_\d+$/.test(name) || !Array.isArray(value)) continue;
      for (const turn of value) {
        const photo = turn.blip_caption ? ` [shares a photo: ${turn.blip_caption}]` : "";
        docs.push({ key: `${group}/${turn.dia_id}`, group, content: `${turn.speaker}: ${turn.text}${photo}` });
        keys.add(`${group}/${turn.dia_id}`);
      }
    }
    for (const qa of sample.qa) {
      // A few evidence lists join two ids in one string; each id found in the conversation counts.
      const relevant = [...new Set((qa.evidence ?? []).flatMap((item) => item.split(/[;,\s]+/)).map((id) => `${group}/${id.trim()}`))].filter((key) => keys.has(key));
      if (relevant.length === 0) continue;
      queries.push({ q: qa.question, group, type: LOCOMO_CATEGORIES[qa.category] ?? `category ${qa.category}`, relevant });
    }
  }
  return { name: "LoCoMo", docs, queries };
}

/** The records of a SMART-format file: `.I <n>` starts one, `.X` lines start its fields. */
function smartRecords(text: string): { id: string; fields: Record<string, string> }[] {
  const records: { id: string; fields: Record<string, string> }[] = [];
  let field = "";
  for (const line of text.split("\n")) {
    const start = /^\.I\s+(\d+)/.exec(line);
    if (start) {
      records.push({ id: String(Number(start[1])), fields: {} });
      field = "";
      continue;
    }
    const marker = /^\.([A-Z])\s*$/.exec(line);
    const record = records.at(-1);
    if (marker) field = marker[1] as string;
    else if (record && field) record.fields[field] = `${record.fields[field] ?? ""}${line.trim()} `;
  }
  return records;
}

/** The abstracts (title and text) as entries; queries are numbered 1… in file order, as the judgements number them. */
export function loadCranfield(): RetrievalSet {
  const folder = join(dataDir, "cranfield");
  const group = "cranfield";
  const docs = smartRecords(gunzipSync(readFileSync(join(folder, "cran.all.1400.gz"))).toString("utf8")).map(({ id, fields }) => ({
    key: id,
    group,
    content: `${(fields.T ?? "").replace(/\s+\./g, ".").trim()}\n${(fields.W ?? "").replace(/\s+/g, " ").trim()}`,
  })).filter((doc) => doc.content.trim() !== "");
  const present = new Set(docs.map((doc) => doc.key));
  const relevant = new Map<string, string[]>();
  for (const line of readFileSync(join(folder, "cranqrel"), "utf8").split("\n")) {
    const [query, doc, code] = line.trim().split(/\s+/);
    // Codes 1–4 are Cleverdon's degrees of relevance; -1 marks a pair judged not relevant.
    if (!query || !doc || !code || Number(code) < 1 || Number(code) > 4 || !present.has(doc)) continue;
    relevant.set(query, [...(relevant.get(query) ?? []), doc]);
  }
  const queries = smartRecords(readFileSync(join(folder, "cran.qry"), "utf8"))
    .map(({ fields }, index) => ({ q: (fields.W ?? "").replace(/\s+/g, " ").trim().replace(/\s+\.$/, ""), group, type: "technical", relevant: relevant.get(String(index + 1)) ?? [] }))
    .filter((query) => query.relevant.length > 0);
  return { name: "Cranfield", docs, queries };
}
