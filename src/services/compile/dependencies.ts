import { newId } from "../../core/ids.js";
import type { AnchorRow } from "../../store/compile.js";
import type { Store, Tx } from "../../store/store.js";

// `depends_on` edges between compiled entries (CONTRACT §18), from the `symbol` deps of the units
// a compile wrote. A dep names code by symbol; it is resolved, in this order, to
//   1. the anchor of that symbol in the unit's own file (what `cairn compile` sends: the file's
//      other top-level names it uses),
//   2. the anchor `path::symbol` when the name has that form,
//   3. the project's one anchor of that symbol, when exactly one file has it;
// otherwise to nothing: a name two files define, or code not compiled yet, makes no edge. Deps of
// kind `import` name modules, not anchors, and make none.

/** An anchor whose entry is live: where an edge may end. */
export interface Placed {
  entryPk: number;
  entryId: string;
}

/** A unit this compile wrote, with the symbol names it depends on. */
export interface Dependent extends Placed {
  path: string;
  symbol: string;
  names: readonly string[];
}

export const anchorKey = (path: string, symbol: string): string => `${path}\u0000${symbol}`;

/** `path::symbol` split at its first `::` (a symbol may hold `::` itself; a path rarely does). */
function qualified(name: string): { path: string; symbol: string } | null {
  const at = name.indexOf("::");
  return at <= 0 ? null : { path: name.slice(0, at), symbol: name.slice(at + 2) };
}

export class DependencyLinks {
  constructor(private readonly store: Store) {}

  /**
   * Replaces the `depends_on` edges of each dependent with those its names resolve to. `placed`
   * holds every anchor at the paths of this compile, by `anchorKey`, as they are after it.
   */
  async link(tx: Tx, actor: string, project: string | null, dependents: readonly Dependent[], placed: ReadonlyMap<string, Placed>, at: string): Promise<void> {
    const known = new Map(placed);
    await this.learn(tx, project, known, dependents);
    const unique = await this.onlyOnes(tx, project, dependents, known);
    for (const dependent of dependents) {
      const targets = new Map<number, Placed>();
      for (const name of dependent.names) {
        const named = qualified(name);
        const target = known.get(anchorKey(dependent.path, name)) ?? (named ? known.get(anchorKey(named.path, named.symbol)) : undefined) ?? unique.get(name);
        if (target && target.entryPk !== dependent.entryPk) targets.set(target.entryPk, target);
      }
      await this.store.compile.dropDependsOn(tx, dependent.entryPk, [...targets.values()].map((target) => target.entryId));
      for (const target of targets.values()) {
        await this.store.graph.upsert(tx, { id: newId(), srcPk: dependent.entryPk, dstPk: target.entryPk, rel: "depends_on", note: null, project, agentId: actor, at });
      }
    }
  }

  /** Adds the anchors of the files that `path::symbol` names point into. */
  private async learn(tx: Tx, project: string | null, known: Map<string, Placed>, dependents: readonly Dependent[]): Promise<void> {
    const paths = new Set<string>();
    for (const dependent of dependents) {
      for (const name of dependent.names) {
        const named = qualified(name);
        if (named && !known.has(anchorKey(named.path, named.symbol))) paths.add(named.path);
      }
    }
    for (const [key, placed] of await this.live(tx, await this.store.compile.anchorsAt(tx, project, [...paths]))) known.set(key, placed);
  }

  /** The project's only anchor of each name that neither its own file nor a path resolved. */
  private async onlyOnes(tx: Tx, project: string | null, dependents: readonly Dependent[], known: ReadonlyMap<string, Placed>): Promise<Map<string, Placed>> {
    const names = new Set<string>();
    for (const dependent of dependents) {
      for (const name of dependent.names) if (!known.has(anchorKey(dependent.path, name))) names.add(name);
    }
    const anchors = await this.store.compile.onlyAnchorsNamed(tx, project, [...names]);
    const live = await this.live(tx, anchors);
    return new Map(anchors.flatMap((anchor) => {
      const placed = live.get(anchorKey(anchor.path, anchor.symbol));
      return placed ? [[anchor.symbol, placed] as const] : [];
    }));
  }

  /** The anchors whose entries are live, by key. */
  private async live(tx: Tx, anchors: readonly AnchorRow[]): Promise<Map<string, Placed>> {
    const rows = await this.store.memory.byPks(tx, anchors.map((anchor) => anchor.memory_pk));
    const placed = new Map<string, Placed>();
    for (const anchor of anchors) {
      const row = rows.get(anchor.memory_pk);
      if (row && row.deleted_at === null) placed.set(anchorKey(anchor.path, anchor.symbol), { entryPk: row.pk, entryId: row.id });
    }
    return placed;
  }
}
