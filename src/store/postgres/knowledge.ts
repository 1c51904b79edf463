import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { pgDialect, pgRun } from "./run.js";

export const pgKnowledge = new SqlKnowledgeReads(pgRun, pgDialect);
