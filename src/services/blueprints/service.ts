import { createHash } from "node:crypto";
import { invalidFields, notFound } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { BlueprintRow } from "../../store/blueprints.js";
import type { Store } from "../../store/store.js";
import type { Blueprint, BlueprintDocument } from "../../wire/blueprints.js";
import { checkProjectWrite } from "../access.js";
import { viewpointOf, type Caller } from "../caller.js";
import { decodeCursor, pageOf, type Page } from "../paging.js";
import { checkBlueprint } from "./validate.js";
import { locks } from "../locks.js";

/** Names that would read as a route under /blueprints. */
const RESERVED_NAMES = new Set(["runs"]);
const MAX_VERSIONS = 1000;

const toBlueprint = (row: BlueprintRow): Blueprint => ({
  id: row.id,
  name: row.name,
  project: row.project,
  version: row.version,
  document: JSON.parse(row.document) as Record<string, unknown>,
  created_by: row.created_by,
  created_at: row.created_at,
  node_count: row.node_count,
});

const isKeyCursor = (value: unknown): value is { key: string; name: string } =>
  typeof value === "object" && value !== null && typeof (value as { key?: unknown }).key === "string" && typeof (value as { name?: unknown }).name === "string";

/** Blueprints (CONTRACT §17): saving checked, versioned plans, and reading them back. */
export class BlueprintService {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
  ) {}

  private async currentProject(caller: Caller): Promise<string | null> {
    return (await this.store.agents.get(this.store.reader, caller.agentId))?.current_project ?? null;
  }

  /**
   * Saves a document as the next version of its name, or answers the current version when the
   * document is the same (`created` false). Every problem of a document comes back in one 422.
   */
  async save(caller: Caller, input: BlueprintDocument): Promise<{ blueprint: Blueprint; created: boolean }> {
    const checked = checkBlueprint(input);
    if (!checked.ok) throw invalidFields(checked.problems, "the blueprint has problems");
    const document = checked.document;
    if (RESERVED_NAMES.has(document.name)) throw invalidFields([{ path: "name", message: `${document.name} is reserved` }], "the blueprint has problems");
    const project = document.project === undefined ? await this.currentProject(caller) : document.project;
    await checkProjectWrite(this.store.projects, this.store.reader, caller, project);
    const stored = JSON.stringify({ ...document, project });
    const hash = createHash("sha256").update(stored, "utf8").digest("hex");
    return this.store.transaction(async (tx) => {
      await tx.lock(locks.blueprint(project, document.name));
      const latest = await this.store.blueprints.latest(tx, project, document.name);
      if (latest && latest.doc_hash === hash) return { blueprint: toBlueprint(latest), created: false };
      const row = {
        id: newId(),
        project,
        name: document.name,
        version: (latest?.version ?? 0) + 1,
        document: stored,
        doc_hash: hash,
        node_count: document.nodes.length,
        created_by: caller.agentId,
        created_at: now(),
      };
      const pk = await this.store.blueprints.insert(tx, row);
      await this.bus.emit(tx, {
        type: "blueprint.saved",
        agentId: caller.agentId,
        project,
        payload: { blueprint_id: row.id, name: row.name, project, version: row.version },
      });
      return { blueprint: toBlueprint({ ...row, pk }), created: true };
    });
  }

  /** The current version of each visible blueprint, by project then name. */
  async list(caller: Caller, input: { project?: string | null | undefined; name?: string | undefined; limit: number; cursor?: string | undefined }): Promise<Page<Blueprint>> {
    const after = decodeCursor(input.cursor, isKeyCursor);
    const rows = await this.store.blueprints.current(
      this.store.reader,
      viewpointOf(caller),
      { project: input.project, name: input.name },
      after ? JSON.stringify([after.key, after.name]) : null,
      input.limit + 1,
    );
    return pageOf(rows, input.limit, toBlueprint, (row) => ({ key: row.project ?? "", name: row.name }));
  }

  /** Every version of one blueprint, newest first; `project` omitted: the caller's current project. */
  async versions(caller: Caller, name: string, project: string | null | undefined): Promise<Blueprint[]> {
    const where = project === undefined ? await this.currentProject(caller) : project;
    const rows = await this.store.blueprints.versions(this.store.reader, viewpointOf(caller), where, name, MAX_VERSIONS);
    if (rows.length === 0) throw notFound("blueprint");
    return rows.map(toBlueprint);
  }
}
