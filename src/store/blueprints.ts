import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

export interface BlueprintRow {
  pk: number;
  id: string;
  project: string | null;
  name: string;
  version: number;
  /** JSON of the checked document. */
  document: string;
  doc_hash: string;
  node_count: number;
  created_by: string;
  created_at: string;
}

/** `project_key` (the project, or '' for a global blueprint) exists for the unique key. */
export const BLUEPRINT_ROW_COLUMNS = rowColumns<BlueprintRow>(
  "blueprints",
  { pk: true, id: true, project: true, name: true, version: true, document: true, doc_hash: true, node_count: true, created_by: true, created_at: true },
  ["project_key"],
);

export type NewBlueprintRow = Omit<BlueprintRow, "pk">;

/** Blueprints by version. A project's are its members' (and the all-seeing roles'); global ones everyone's. */
export interface BlueprintStore {
  insert(tx: Tx, row: NewBlueprintRow): Promise<number>;
  /** The newest version of a name in a project (null: global), visible or not: the caller decides. */
  latest(r: Reader, project: string | null, name: string): Promise<BlueprintRow | undefined>;
  /** The newest version of each visible blueprint, by project then name, after `after` (`project_key|name`). */
  current(r: Reader, viewpoint: Viewpoint, filters: { project?: string | null | undefined; name?: string | undefined }, after: string | null, limit: number): Promise<BlueprintRow[]>;
  /** Every version of a visible blueprint, newest first. */
  versions(r: Reader, viewpoint: Viewpoint, project: string | null, name: string, limit: number): Promise<BlueprintRow[]>;
}
