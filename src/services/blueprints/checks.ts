import type { FieldError } from "../../core/errors.js";
import { parseIdRef } from "../../core/ids.js";
import { now } from "../../core/time.js";
import type { Reader, Store } from "../../store/store.js";
import type { Viewpoint } from "../../store/visibility.js";
import { viewpointOf, type Caller } from "../caller.js";
import { keywordTerms } from "../keyword-terms.js";
import type { z } from "zod";
import type { blueprintCheck } from "../../wire/blueprints.js";

// A node's `done_check`s (CONTRACT §17): three kinds of question about what the server already
// holds — an entry written, an anchor changed, a task completed. Each is a read through the
// store's own queries with the values as parameters; none runs anything a blueprint wrote.

type Check = z.output<typeof blueprintCheck>;

const MATCHES_READ = 50;

/** The reads the checks make. */
export interface CheckReads {
  anchorSha(r: Reader, project: string | null, anchor: string): Promise<string | null>;
  /** Whether a visible live entry of the project with the tag and/or matching the query changed at or after `since`. */
  memoryWrittenSince(r: Reader, viewpoint: Viewpoint, project: string | null, since: string, check: { tag?: string | undefined; query?: string | undefined }): Promise<boolean>;
  /** The status of a visible task; undefined when there is none. */
  taskStatus(r: Reader, viewpoint: Viewpoint, taskId: string): Promise<string | undefined>;
}

export class StoreCheckReads implements CheckReads {
  constructor(private readonly store: Store) {}

  anchorSha(r: Reader, project: string | null, anchor: string): Promise<string | null> {
    const at = anchor.indexOf("::");
    return this.store.compile.anchorSha(r, project, anchor.slice(0, at), anchor.slice(at + 2));
  }

  async memoryWrittenSince(r: Reader, viewpoint: Viewpoint, project: string | null, since: string, check: { tag?: string | undefined; query?: string | undefined }): Promise<boolean> {
    const at = now();
    const filters = { project, tag: check.tag };
    if (check.query === undefined) {
      const [newest] = await this.store.memory.list(r, viewpoint, at, filters, null, 1, "recent");
      return newest !== undefined && newest.updated_at >= since;
    }
    const words = keywordTerms(check.query);
    if (words.length === 0) return false;
    const matches = await this.store.keywords.search(r, viewpoint, at, words, filters, MATCHES_READ);
    const rows = await this.store.memory.byPks(r, matches.hits.map((match) => match.pk));
    return [...rows.values()].some((row) => row.updated_at >= since);
  }

  async taskStatus(r: Reader, viewpoint: Viewpoint, taskId: string): Promise<string | undefined> {
    let ref;
    try {
      ref = parseIdRef(taskId, "task_id");
    } catch {
      return undefined;
    }
    const rows = await this.store.tasks.findVisible(r, viewpoint, ref);
    return rows.length === 1 ? rows[0]?.status : undefined;
  }
}

export interface CheckSubject {
  project: string | null;
  /** When the task was claimed: entries must be written since. */
  claimedAt: string | null;
  /** Each anchor's sha when the task was created. */
  anchors: Record<string, string | null>;
}

/** The checks that fail, each with its path `done_check.<i>`, as the completing agent sees things. */
export async function doneCheckProblems(reads: CheckReads, r: Reader, caller: Caller, subject: CheckSubject, checks: readonly Check[]): Promise<FieldError[]> {
  const viewpoint = viewpointOf(caller);
  const problems: FieldError[] = [];
  for (const [index, check] of checks.entries()) {
    const path = `done_check.${index}`;
    if (check.kind === "memory") {
      const since = subject.claimedAt ?? now();
      if (!(await reads.memoryWrittenSince(r, viewpoint, subject.project, since, check))) {
        const what = [check.tag === undefined ? null : `tagged ${check.tag}`, check.query === undefined ? null : `matching "${check.query}"`].filter((part) => part !== null).join(" and ");
        problems.push({ path, message: `no entry ${what} written in the run's project since the task was claimed` });
      }
    } else if (check.kind === "anchor_changed") {
      const before = subject.anchors[check.anchor] ?? null;
      const current = await reads.anchorSha(r, subject.project, check.anchor);
      if (current === before) problems.push({ path, message: `anchor ${check.anchor} has not changed since the task was created` });
    } else {
      const status = await reads.taskStatus(r, viewpoint, check.task_id);
      if (status !== "completed") problems.push({ path, message: `task ${check.task_id} is not completed` });
    }
  }
  return problems;
}
