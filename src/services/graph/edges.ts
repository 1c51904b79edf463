// The typed edges both graph computations read (CONTRACT §14).

import type { EDGE_RELS } from "../../wire/edge-rels.js";

export type GraphRel = (typeof EDGE_RELS)[number];

export type { TypedEdge } from "../../store/knowledge.js";
