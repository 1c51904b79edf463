import { MAX_PRUNE_PATHS, type CheckItem } from "../../wire/compile.js";
import { covers } from "./selection.js";
import type { Unit } from "./units.js";

/** What `POST /compile/check` says of a unit; a unit it does not mention counts as unknown. */
export type UnitStatus = CheckItem["status"];

/** The `(path, symbol)` an anchor or unit stands for. */
export interface UnitKey {
  path: string;
  symbol: string;
}

/** One `POST /compile` request. */
export interface Batch {
  units: Unit[];
  prune_paths: string[];
}

export interface Plan {
  batches: Batch[];
  /** Units to send, by the status the server gave them. */
  sending: Record<UnitStatus, number>;
  /** Paths whose anchors on the server name a file or symbol that is gone. */
  prunePaths: string[];
}

/** How much one request may carry: units, and bytes of body (the server's MAX_BODY_BYTES). */
export interface Limits {
  units: number;
  bytes: number;
}

/**
 * Units per `POST /compile`: the contract allows 2000, but the server embeds every unit it writes
 * within the request (about 25 ms each with use-lite on a small machine), and fetch gives up on an
 * answer after 300 s. 500 keeps a request under a minute and still holds the largest file (500 units).
 */
export const MAX_UNITS_PER_SEND = 500;
/** Room in a body for everything but the units and prune paths: project, commit, keys, brackets. */
export const ENVELOPE_BYTES = 1024;

export const keyOf = (unit: UnitKey): string => `${unit.path}\0${unit.symbol}`;
/** A value's share of a JSON array body: its text and a comma. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8") + 1;

/** A file's units to send, with its path when it is pruned: the two travel in one request. */
interface Group {
  path: string;
  units: Unit[];
  prune: boolean;
}

/** The path a group's units could not travel with, for the message. */
export class OversizedFileError extends Error {
  constructor(path: string, bytes: number) {
    super(`the units of ${path} do not fit in one request of ${bytes} bytes, and a pruned file's units must travel together; raise MAX_BODY_BYTES (on the server and here)`);
    this.name = "OversizedFileError";
  }
}

/**
 * Packs files into requests within `limits`: a pruned file's units in the request that prunes it
 * (or the prune would remove them); a file that is not pruned is split when it has to be.
 */
function pack(groups: Group[], loosePrunes: string[], limits: Limits): Batch[] {
  const budget = limits.bytes - ENVELOPE_BYTES;
  const batches: Batch[] = [];
  let current: Batch = { units: [], prune_paths: [] };
  let bytes = 0;
  const fits = (units: number, size: number, prunes: number): boolean =>
    current.units.length + units <= limits.units && bytes + size <= budget && current.prune_paths.length + prunes <= MAX_PRUNE_PATHS;
  const next = (): void => {
    if (current.units.length > 0 || current.prune_paths.length > 0) batches.push(current);
    current = { units: [], prune_paths: [] };
    bytes = 0;
  };
  const add = (units: Unit[], size: number, prune: string | undefined): void => {
    if (!fits(units.length, size, prune === undefined ? 0 : 1)) next();
    current.units.push(...units);
    if (prune !== undefined) current.prune_paths.push(prune);
    bytes += size;
  };
  for (const group of groups) {
    const size = group.units.reduce((total, unit) => total + jsonBytes(unit), group.prune ? jsonBytes(group.path) : 0);
    if (group.units.length <= limits.units && size <= budget) add(group.units, size, group.prune ? group.path : undefined);
    else if (group.prune) throw new OversizedFileError(group.path, limits.bytes);
    else for (const unit of group.units) add([unit], jsonBytes(unit), undefined);
  }
  for (const path of loosePrunes) add([], jsonBytes(path), path);
  next();
  return batches;
}

/**
 * A batch the server refused as too large (its MAX_BODY_BYTES is smaller than ours), in two: by
 * files (a pruned file's units stay beside its prune), or a single file that is not pruned by its
 * units. Undefined when it cannot be split.
 */
export function halves(batch: Batch): [Batch, Batch] | undefined {
  const pruned = new Set(batch.prune_paths);
  const files = new Map<string, Unit[]>();
  for (const unit of batch.units) files.set(unit.path, [...(files.get(unit.path) ?? []), unit]);
  const items: Batch[] = [
    ...[...files].map(([path, units]) => ({ units, prune_paths: pruned.has(path) ? [path] : [] })),
    ...batch.prune_paths.filter((path) => !files.has(path)).map((path) => ({ units: [], prune_paths: [path] })),
  ];
  const join = (parts: Batch[]): Batch => ({ units: parts.flatMap((part) => part.units), prune_paths: parts.flatMap((part) => part.prune_paths) });
  if (items.length >= 2) {
    const middle = Math.ceil(items.length / 2);
    return [join(items.slice(0, middle)), join(items.slice(middle))];
  }
  if (batch.prune_paths.length > 0 || batch.units.length < 2) return undefined;
  const middle = Math.ceil(batch.units.length / 2);
  return [{ units: batch.units.slice(0, middle), prune_paths: [] }, { units: batch.units.slice(middle), prune_paths: [] }];
}

/**
 * A fresh unit that travels only because its file is pruned: the server leaves its entry as it
 * is (only the anchor's lines, kind and signature are brought up to date), so its description
 * and deps stay home — descriptions are sent only for what changed.
 */
const unchangedUnit = (unit: Unit): Unit => ({ ...unit, description: "", deps: [] });

/**
 * What to send, given the local units, the server's statuses for them and the server's anchors in
 * the selection's scope. A unit that is not fresh is sent. A path with an anchor the local units
 * no longer have is pruned; if the file is still there, all its units go with the prune (the
 * server removes the anchors of a pruned path that the request does not name), the fresh ones
 * without their descriptions.
 */
export function planSend(units: Unit[], statuses: Map<string, UnitStatus>, anchors: UnitKey[], scope: "all" | string[], limits: Limits): Plan {
  const local = new Set(units.map(keyOf));
  const inScope = scope === "all" ? anchors : anchors.filter((anchor) => scope.some((prefix) => covers(prefix, anchor.path)));
  const prunePaths = [...new Set(inScope.filter((anchor) => !local.has(keyOf(anchor))).map((anchor) => anchor.path))].sort();
  const pruned = new Set(prunePaths);

  const byPath = new Map<string, Unit[]>();
  for (const unit of units) {
    const list = byPath.get(unit.path);
    if (list === undefined) byPath.set(unit.path, [unit]);
    else list.push(unit);
  }
  const sending: Record<UnitStatus, number> = { fresh: 0, stale: 0, unknown: 0 };
  const groups: Group[] = [];
  for (const [path, fileUnits] of byPath) {
    const prune = pruned.has(path);
    const chosen: Unit[] = [];
    for (const unit of fileUnits) {
      const status = statuses.get(keyOf(unit)) ?? "unknown";
      if (status === "fresh" && !prune) continue;
      sending[status]++;
      chosen.push(status === "fresh" ? unchangedUnit(unit) : unit);
    }
    if (chosen.length > 0) groups.push({ path, units: chosen, prune });
  }
  const loosePrunes = prunePaths.filter((path) => !byPath.has(path));
  return { batches: pack(groups, loosePrunes, limits), sending, prunePaths };
}
