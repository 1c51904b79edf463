import type { Logger } from "../src/core/log.js";
import type { MemoryEntry } from "../src/wire/memory.js";
import { ApiError } from "../src/client/operations.js";
import type { CairnClient } from "./client.js";

const DAY_MS = 86_400_000;
/** Entries one pass looks at for decay or promotion, per type. */
const MAX_SCAN = 50_000;
const BATCH = 500;
const SCRATCH_TAG = "scratch";

export interface UpkeepSettings {
  decayRate: number;
  decayFloor: number;
  decayWindowDays: number;
  promotionMinConfidence: number;
  promotionMinReaders: number;
  promotionMinReinforcements: number;
  promotionStableDays: number;
}

const round6 = (value: number): number => Math.round(value * 1e6) / 1e6;

/** When an entry was last reinforced: a duplicate write, or an update by anyone. */
const lastReinforced = (entry: MemoryEntry): string =>
  entry.last_reinforced_at !== null && entry.last_reinforced_at > entry.updated_at ? entry.last_reinforced_at : entry.updated_at;

/**
 * Decay: each pass, a memory or doc entry not reinforced within the window loses confidence,
 * `max(floor, confidence × rate)`, without a version bump. Directives are never read here (the
 * listing asks for memory and doc only) and the server refuses them besides.
 */
export async function decay(client: CairnClient, settings: UpkeepSettings, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - settings.decayWindowDays * DAY_MS).toISOString();
  const updates: { id: string; confidence: number }[] = [];
  for (const type of ["memory", "doc"] as const) {
    const entries = await client.all("memory_list", { type, updated_before: cutoff, confidence_min: settings.decayFloor + 1e-6 }, MAX_SCAN);
    for (const entry of entries) {
      if (entry.type !== type || lastReinforced(entry) >= cutoff) continue;
      const confidence = Math.max(settings.decayFloor, round6(entry.confidence * settings.decayRate));
      if (confidence < entry.confidence) updates.push({ id: entry.id, confidence });
    }
  }
  let updated = 0;
  for (let start = 0; start < updates.length; start += BATCH) {
    updated += (await client.call("archivist_set_confidence", { updates: updates.slice(start, start + BATCH) })).updated;
  }
  return updated;
}

export interface Promotions {
  scratch: number;
  doc: number;
}

/**
 * Promotion by reinforcement pattern, one step per pass: a `scratch` memory reinforced often enough
 * loses the tag (plain memory); a memory that is confident, read by enough agents or reinforced
 * enough, and unchanged for the stable period becomes a doc. Docs and directives never move.
 */
export async function promote(client: CairnClient, settings: UpkeepSettings, now: Date, log: Logger): Promise<Promotions> {
  const result: Promotions = { scratch: 0, doc: 0 };
  // If-Match on the version that was read, so a concurrent edit wins over the promotion.
  const patch = async (entry: MemoryEntry, body: Record<string, unknown>): Promise<boolean> => {
    try {
      await client.call("memory_update", { ...body, id: entry.id, if_match: `"${entry.version}"` });
      return true;
    } catch (error) {
      // Changed or deleted since it was listed: its next pass decides again.
      if (error instanceof ApiError && (error.status === 404 || error.status === 412)) return false;
      throw error;
    }
  };
  const scratch = await client.all("memory_list", { type: "memory", tag: SCRATCH_TAG }, MAX_SCAN);
  const promotedScratch = new Set<string>();
  for (const entry of scratch) {
    if (entry.type !== "memory" || entry.reinforcement_count < settings.promotionMinReinforcements) continue;
    if (await patch(entry, { tags: entry.tags.filter((tag) => tag !== SCRATCH_TAG) })) {
      promotedScratch.add(entry.id);
      result.scratch++;
    }
  }
  const stableBefore = new Date(now.getTime() - settings.promotionStableDays * DAY_MS).toISOString();
  const candidates = await client.all("memory_list", { type: "memory", confidence_min: settings.promotionMinConfidence, updated_before: stableBefore }, MAX_SCAN);
  for (const entry of candidates) {
    if (entry.type !== "memory" || promotedScratch.has(entry.id) || entry.tags.includes(SCRATCH_TAG)) continue;
    const used = entry.distinct_readers >= settings.promotionMinReaders || entry.reinforcement_count >= settings.promotionMinReinforcements;
    if (!used || entry.confidence < settings.promotionMinConfidence) continue;
    if (await patch(entry, { type: "doc" })) result.doc++;
  }
  if (result.scratch + result.doc > 0) log.info("promoted entries", { ...result });
  return result;
}
