import type { FeedRow } from "../../store/memory-feed.js";
import type { EntrySource } from "../../wire/memory.js";
import type { JsonFeed } from "../../wire/memory-feed.js";
import { headlineOf } from "../compact-entries.js";

/** The longest item title (CONTRACT §15), in characters. */
const TITLE_CHARS = 80;

type FeedItemFields = JsonFeed["items"][number]["_cairn"];

/** An entry as both feed formats show it: what JSON Feed and Atom each render their way. */
export interface FeedEntry {
  id: string;
  url: string;
  /** Null on a tombstone, which carries neither title, content nor tags. */
  title: string | null;
  content: string | null;
  tags: string[];
  author: string;
  published: string;
  modified: string;
  /** When a tombstone's entry was deleted (or expired); null for a live entry. */
  deletedAt: string | null;
  fields: FeedItemFields;
}

/** Who this instance is, and where its entries are read. */
export interface FeedSite {
  instanceId: string;
  instanceName: string;
  /** PUBLIC_URL (or the address the server listens on), without a trailing slash. */
  url: string;
}

/**
 * An entry's origin: this instance for a row that names none; a peer's copy (CONTRACT §16) names
 * its origin, and its provenance the origin's name.
 */
function originOf(row: FeedRow, site: FeedSite): { origin: string; origin_name: string } {
  if (row.origin === null) return { origin: site.instanceId, origin_name: site.instanceName };
  const source = row.source === null ? null : (JSON.parse(row.source) as { origin_name?: unknown });
  return { origin: row.origin, origin_name: typeof source?.origin_name === "string" ? source.origin_name : row.origin };
}

/** The row as a feed entry at time `at`: a deleted entry, or one expired but not yet swept, is a tombstone. */
export function feedEntryOf(row: FeedRow, site: FeedSite, at: string): FeedEntry {
  const deletedAt = row.deleted_at ?? (row.expires_at !== null && row.expires_at <= at ? row.expires_at : null);
  const live = deletedAt === null;
  return {
    id: row.id,
    url: `${site.url}/memory/${row.id}`,
    title: live ? headlineOf(row, TITLE_CHARS) : null,
    content: live ? row.content : null,
    tags: live ? (JSON.parse(row.tags) as string[]) : [],
    author: row.agent_id,
    published: row.created_at,
    modified: deletedAt ?? row.updated_at,
    deletedAt,
    fields: {
      type: row.type,
      scope: row.scope,
      project: row.project,
      agent_id: row.agent_id,
      version: row.version,
      confidence: row.confidence,
      parents: JSON.parse(row.parents) as string[],
      ...originOf(row, site),
      source: row.source === null ? null : (JSON.parse(row.source) as EntrySource),
      created_at: row.created_at,
      updated_at: row.updated_at,
      ...(deletedAt === null ? {} : { deleted_at: deletedAt }),
      change_seq: row.change_seq,
    },
  };
}
