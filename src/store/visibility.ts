/**
 * Who is looking. Every read of shared content takes one, so visibility is applied inside the
 * query (and `limit` counts only visible rows). Project membership is the store's to know.
 */
export interface Viewpoint {
  agentId: string;
  /** Roles `owner` and `archivist` see every project (never another agent's private entries). */
  allProjects: boolean;
}
