import { setTimeout as sleep } from "node:timers/promises";
import { MAX_UNITS_PER_CHECK, type CheckItem, type CompileResult } from "../../wire/compile.js";
import type { OwnerClient } from "../owner-client.js";
import { ENVELOPE_BYTES, halves, jsonBytes, keyOf, type Batch, type Limits, type UnitKey, type UnitStatus } from "./plan.js";
import { covers } from "./selection.js";
import type { Unit } from "./units.js";

const ANCHOR_PAGE = 500;
/** More scope paths than this: list the project's anchors once rather than a listing per path. */
const MAX_SCOPED_LISTINGS = 50;

const json = (body: unknown): { method: string; body: string; contentType: string } => ({ method: "POST", body: JSON.stringify(body), contentType: "application/json" });
const withProject = (project: string | undefined): { project?: string } => (project === undefined ? {} : { project });

/** Every anchor `compile_anchors` lists with `filters`, page by page. */
async function listAnchors(client: OwnerClient, project: string | undefined, filters: { path_prefix?: string }): Promise<UnitKey[]> {
  const anchors = await client.operations.all("compile_anchors", { ...withProject(project), ...filters, limit: ANCHOR_PAGE }, Number.MAX_SAFE_INTEGER);
  return anchors.map(({ path, symbol }) => ({ path, symbol }));
}

/** The server's anchors at or under the scope's paths (all of the project's for "all"). */
export async function anchorsInScope(client: OwnerClient, project: string | undefined, scope: "all" | string[]): Promise<UnitKey[]> {
  if (scope === "all" || scope.length > MAX_SCOPED_LISTINGS) {
    const all = await listAnchors(client, project, {});
    return scope === "all" ? all : all.filter((anchor) => scope.some((prefix) => covers(prefix, anchor.path)));
  }
  const found: UnitKey[] = [];
  for (const prefix of scope) {
    // path_prefix is a plain string prefix: `src/a.ts` also brings `src/a.tsx`, dropped here.
    const anchors = await listAnchors(client, project, { path_prefix: prefix });
    found.push(...anchors.filter((anchor) => covers(prefix, anchor.path)));
  }
  return found;
}

/**
 * A server past a quota (429, CONTRACT §2.1) says how long to wait in Retry-After: a wait up to
 * this long is waited out and the request sent again, up to MAX_WAITS times; anything longer is
 * the server's refusal, said as it is.
 */
const MAX_WAIT_SECONDS = 900;
const MAX_WAITS = 20;

/** Told of each wait for the server, with its reason (the refusal's detail). */
export type OnWait = (seconds: number, reason: string) => void;

const retryAfterOf = (response: Response): number | undefined => {
  const seconds = Number(response.headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
};

/**
 * A POST whose body the server found too large (413) answers undefined, so the caller can split
 * it; one the server asks to send later (429) is sent again after the wait.
 */
async function postUnlessTooLarge<T>(client: OwnerClient, path: string, body: unknown, onWait: OnWait): Promise<T | undefined> {
  for (let waits = 0; ; waits++) {
    const response = await client.request(path, json(body));
    if (response.status === 413) {
      await response.body?.cancel();
      return undefined;
    }
    const wait = response.status === 429 ? retryAfterOf(response) : undefined;
    if (wait === undefined || wait > MAX_WAIT_SECONDS || waits >= MAX_WAITS) return (await (await client.check(response)).json()) as T;
    const text = await response.text();
    let reason = text;
    try {
      reason = (JSON.parse(text) as { detail?: string }).detail ?? text;
    } catch {
      // not JSON: the text says it
    }
    onWait(wait, reason);
    await sleep(wait * 1000);
  }
}

const silently: OnWait = () => undefined;

/** Splits keys into requests of at most 5000 and within the body limit. */
function checkChunks(keys: { path: string; symbol: string; sha: string }[], bytes: number): (typeof keys)[] {
  const chunks: (typeof keys)[] = [];
  let current: typeof keys = [];
  let size = 0;
  for (const key of keys) {
    const length = jsonBytes(key);
    if (current.length > 0 && (current.length >= MAX_UNITS_PER_CHECK || size + length > bytes - ENVELOPE_BYTES)) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(key);
    size += length;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** The server's status for each unit, asked in requests of at most 5000 (halved when the server finds one too large). */
export async function checkUnits(client: OwnerClient, project: string | undefined, units: Unit[], limits: Limits, onWait: OnWait = silently): Promise<Map<string, UnitStatus>> {
  const statuses = new Map<string, UnitStatus>();
  const ask = async (keys: { path: string; symbol: string; sha: string }[]): Promise<void> => {
    const answer = await postUnlessTooLarge<CheckItem[]>(client, "/compile/check", { ...withProject(project), units: keys }, onWait);
    if (answer !== undefined) {
      for (const item of answer) statuses.set(keyOf(item), item.status);
      return;
    }
    if (keys.length === 1) throw new Error(`the server refuses to check ${keys[0]?.path ?? "a unit"} as too large (MAX_BODY_BYTES)`);
    const half = Math.ceil(keys.length / 2);
    await ask(keys.slice(0, half));
    await ask(keys.slice(half));
  };
  for (const chunk of checkChunks(units.map(({ path, symbol, sha }) => ({ path, symbol, sha })), limits.bytes)) await ask(chunk);
  return statuses;
}

/**
 * Sends each batch with `POST /compile` and adds up the answers. A batch the server refuses as too
 * large (its MAX_BODY_BYTES is smaller than ours, or it is more than an hour of the agent's compile
 * quota) is sent again in halves; one it asks to send later (the agent's quota or embedding backlog
 * is full) is sent again when it says.
 */
export async function sendBatches(client: OwnerClient, project: string | undefined, commit: string | undefined, batches: Batch[], onWait: OnWait = silently): Promise<CompileResult> {
  const total: CompileResult = { project: project ?? null, anchors: 0, created: 0, updated: 0, unchanged: 0, removed: 0, invalidated: [], memory_ids: [] };
  const send = async (batch: Batch): Promise<void> => {
    const body = { ...withProject(project), ...(commit === undefined ? {} : { commit }), units: batch.units, ...(batch.prune_paths.length > 0 ? { prune_paths: batch.prune_paths } : {}) };
    const result = await postUnlessTooLarge<CompileResult>(client, "/compile", body, onWait);
    if (result === undefined) {
      const parts = halves(batch);
      const what = batch.prune_paths[0] ?? batch.units[0]?.path ?? "a file";
      if (parts === undefined) throw new Error(`the server refuses the units of ${what} as too large (its MAX_BODY_BYTES), and they cannot be split`);
      for (const part of parts) await send(part);
      return;
    }
    total.project = result.project;
    total.anchors = result.anchors;
    total.created += result.created;
    total.updated += result.updated;
    total.unchanged += result.unchanged;
    total.removed += result.removed;
    total.invalidated.push(...result.invalidated);
    total.memory_ids.push(...result.memory_ids);
  };
  for (const batch of batches) await send(batch);
  return total;
}
