import { z } from "zod";
import { defineOperation } from "./operation.js";
import { edgeRel, linkRel, graphEdge, graphNode as nodeRecord } from "../src/wire/graph.js";
import { cursorParam } from "./schemas.js";
import { idRef, limitParam, projectId } from "../src/wire/fields.js";

const graphLink = defineOperation({
  name: "graph_link",
  title: "Link two memory entries",
  description:
    "Record a typed relation from `src` to `dst`: relates_to, supports, contradicts, supersedes, derived_from, or " +
    "grounds (from a compiled entry to an entry about that code, which goes stale when the code changes). " +
    "Both entries must be visible to you and of the same project (or global). Linking the same pair with the same " +
    "relation again updates the note.",
  kind: "create",
  http: { method: "POST", path: "/graph/edge" },
  input: z.strictObject({
    src: idRef,
    dst: idRef,
    rel: linkRel,
    note: z.string().trim().max(2000).nullable().optional(),
  }),
  output: graphEdge,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  handle({ services, caller }, input) {
    return services.graph.link(caller, input);
  },
});

const graphList = defineOperation({
  name: "graph_list",
  title: "List graph edges",
  description: "Edges between entries you can see, newest first; filter by `project` (empty for global) and `rel`.",
  kind: "list",
  http: { method: "GET", path: "/graph" },
  input: z.strictObject({
    project: projectId.nullable().optional().describe("only this project's edges; null (or empty) for global ones"),
    rel: edgeRel.optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: graphEdge,
  handle({ services, caller }, input) {
    return services.graph.list(caller, input);
  },
});

const graphNode = defineOperation({
  name: "graph_node",
  title: "An entry with its edges",
  description: "One memory entry with the edges leaving it (`out`) and reaching it (`in`), at most 200 each, newest first.",
  kind: "read",
  http: { method: "GET", path: "/graph/:node_id" },
  input: z.strictObject({ node_id: idRef }),
  output: nodeRecord,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.graph.node(caller, input.node_id);
  },
});

export const graphOperations = [graphLink, graphList, graphNode];
