import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { sqliteDialect, sqliteRun } from "./run.js";

export const sqliteKnowledge = new SqlKnowledgeReads(sqliteRun, sqliteDialect);
