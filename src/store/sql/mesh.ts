import type {
  HeldEntry,
  MeshDiscoveredRow,
  MeshLinkCounts,
  MeshLinkPatch,
  MeshLinkRow,
  MeshStore,
  MeshSuppressionRow,
  MeshTokenPatch,
  MeshTokenRow,
  NewMeshLinkRow,
  NewMeshTokenRow,
} from "../mesh.js";
import { MESH_LINK_ROW_COLUMNS, MESH_TOKEN_ROW_COLUMNS } from "../mesh.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";
import { MEMORY_COLUMNS } from "./memory.js";

const TOKEN_COLUMNS = MESH_TOKEN_ROW_COLUMNS.columns.join(", ");
const LINK_COLUMNS = MESH_LINK_ROW_COLUMNS.columns.join(", ");

/** A link may be synced when it is not paused and no sync holds a lease on it that has not lapsed. */
const FREE = "paused = 0 AND (lease_until IS NULL OR lease_until <= ?)";

/** `UPDATE … SET` from a patch's defined fields. */
function assignments(patch: Record<string, unknown>): { sql: string; params: unknown[] } | null {
  const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return null;
  return { sql: entries.map(([column]) => `${column} = ?`).join(", "), params: entries.map(([, value]) => value) };
}

export class SqlMesh implements MeshStore {
  constructor(private readonly db: SqlDb) {}

  async insertToken(tx: Tx, row: NewMeshTokenRow): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO mesh_tokens (id, label, token_hash, prefix, projects, include_global, capabilities, expires_at, link_id, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id, row.label, row.token_hash, row.prefix, row.projects, row.include_global, row.capabilities, row.expires_at, row.link_id, row.created_by,
      row.created_at, row.updated_at,
    );
    return Number(inserted?.pk);
  }

  tokenById(r: Reader, id: string): Promise<MeshTokenRow | undefined> {
    return this.db.get<MeshTokenRow>(r, `SELECT ${TOKEN_COLUMNS} FROM mesh_tokens WHERE id = ?`, id);
  }

  tokenByHash(r: Reader, hash: string): Promise<MeshTokenRow | undefined> {
    return this.db.get<MeshTokenRow>(r, `SELECT ${TOKEN_COLUMNS} FROM mesh_tokens WHERE token_hash = ?`, hash);
  }

  listTokens(r: Reader, afterPk: number, limit: number): Promise<MeshTokenRow[]> {
    return this.db.all<MeshTokenRow>(r, `SELECT ${TOKEN_COLUMNS} FROM mesh_tokens WHERE pk > ? ORDER BY pk LIMIT ?`, afterPk, limit);
  }

  async patchToken(tx: Tx, pk: number, patch: MeshTokenPatch): Promise<void> {
    const set = assignments(patch);
    if (set) await this.db.run(tx, `UPDATE mesh_tokens SET ${set.sql} WHERE pk = ?`, ...set.params, pk);
  }

  async revokeToken(tx: Tx, pk: number, at: string): Promise<boolean> {
    return (await this.db.run(tx, "UPDATE mesh_tokens SET revoked_at = ?, updated_at = ? WHERE pk = ? AND revoked_at IS NULL", at, at, pk)) > 0;
  }

  async touchToken(tx: Tx, pk: number, at: string, notBefore: string): Promise<void> {
    await this.db.run(tx, "UPDATE mesh_tokens SET last_used_at = ? WHERE pk = ? AND (last_used_at IS NULL OR last_used_at < ?)", at, pk, notBefore);
  }

  async countLiveTokens(r: Reader): Promise<number> {
    const row = await this.db.get<{ n: number }>(r, "SELECT count(*) AS n FROM mesh_tokens WHERE revoked_at IS NULL");
    return Number(row?.n ?? 0);
  }

  async insertLink(tx: Tx, row: NewMeshLinkRow): Promise<number> {
    const columns = MESH_LINK_ROW_COLUMNS.columns.filter((column) => column !== "pk" && column !== "lease_until" && column !== "lease_holder");
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO mesh_links (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) RETURNING pk`,
      ...columns.map((column) => row[column]),
    );
    return Number(inserted?.pk);
  }

  linkById(r: Reader, id: string): Promise<MeshLinkRow | undefined> {
    return this.db.get<MeshLinkRow>(r, `SELECT ${LINK_COLUMNS} FROM mesh_links WHERE id = ?`, id);
  }

  linkByPeer(r: Reader, peerInstanceId: string): Promise<MeshLinkRow | undefined> {
    return this.db.get<MeshLinkRow>(r, `SELECT ${LINK_COLUMNS} FROM mesh_links WHERE peer_instance_id = ?`, peerInstanceId);
  }

  listLinks(r: Reader, afterPk: number, limit: number): Promise<MeshLinkRow[]> {
    return this.db.all<MeshLinkRow>(r, `SELECT ${LINK_COLUMNS} FROM mesh_links WHERE pk > ? ORDER BY pk LIMIT ?`, afterPk, limit);
  }

  async countLinks(r: Reader): Promise<number> {
    const row = await this.db.get<{ n: number }>(r, "SELECT count(*) AS n FROM mesh_links");
    return Number(row?.n ?? 0);
  }

  async patchLink(tx: Tx, pk: number, patch: MeshLinkPatch): Promise<void> {
    const set = assignments(patch);
    if (set) await this.db.run(tx, `UPDATE mesh_links SET ${set.sql} WHERE pk = ?`, ...set.params, pk);
  }

  async deleteLink(tx: Tx, pk: number): Promise<boolean> {
    return (await this.db.run(tx, "DELETE FROM mesh_links WHERE pk = ?", pk)) > 0;
  }

  // The UPDATE repeats the conditions: on PostgreSQL a row another claim updated between the
  // pick's read and this write is re-checked as it now is, and passed over when taken. The pick is
  // a MATERIALIZED step run once (as the UPDATE's subquery it may be run again per row, past `limit`).
  claimDueLinks(tx: Tx, nowIso: string, holder: string, leaseUntil: string, limit: number): Promise<MeshLinkRow[]> {
    return this.db.all<MeshLinkRow>(
      tx,
      `WITH picked AS MATERIALIZED (
          SELECT l.pk FROM mesh_links l WHERE l.next_sync_at <= ? AND l.paused = 0 AND (l.lease_until IS NULL OR l.lease_until <= ?)
           ORDER BY l.next_sync_at, l.pk LIMIT ?${this.db.dialect.skipLocked(tx, "l")})
       UPDATE mesh_links SET lease_until = ?, lease_holder = ?
        WHERE pk IN (SELECT p.pk FROM picked p)
          AND next_sync_at <= ? AND ${FREE}
        RETURNING ${LINK_COLUMNS}`,
      nowIso, nowIso, limit, leaseUntil, holder, nowIso, nowIso,
    );
  }

  claimLink(tx: Tx, pk: number, nowIso: string, holder: string, leaseUntil: string): Promise<MeshLinkRow | undefined> {
    return this.db.get<MeshLinkRow>(
      tx,
      `UPDATE mesh_links SET lease_until = ?, lease_holder = ?
        WHERE pk = ? AND (lease_until IS NULL OR lease_until <= ?)
        RETURNING ${LINK_COLUMNS}`,
      leaseUntil, holder, pk, nowIso,
    );
  }

  async extendLease(tx: Tx, pk: number, holder: string, leaseUntil: string): Promise<boolean> {
    return (await this.db.run(tx, "UPDATE mesh_links SET lease_until = ? WHERE pk = ? AND lease_holder = ?", leaseUntil, pk, holder)) > 0;
  }

  async advanceCursor(tx: Tx, pk: number, holder: string, cursor: number, counts: MeshLinkCounts): Promise<boolean> {
    return (
      (await this.db.run(
        tx,
        `UPDATE mesh_links SET cursor = ?, applied_total = applied_total + ?, rejected_total = rejected_total + ?, dropped_total = dropped_total + ?
          WHERE pk = ? AND lease_holder = ?`,
        cursor, counts.applied, counts.rejected, counts.dropped, pk, holder,
      )) > 0
    );
  }

  async finishSync(tx: Tx, pk: number, holder: string, patch: MeshLinkPatch): Promise<boolean> {
    const set = assignments(patch);
    return (
      (await this.db.run(
        tx,
        `UPDATE mesh_links SET ${set === null ? "" : `${set.sql}, `}lease_until = NULL, lease_holder = NULL WHERE pk = ? AND lease_holder = ?`,
        ...(set?.params ?? []),
        pk,
        holder,
      )) > 0
    );
  }

  async upsertDiscovered(tx: Tx, row: MeshDiscoveredRow): Promise<void> {
    await this.db.run(
      tx,
      `INSERT INTO mesh_discovered (instance_id, name, url, via, last_seen_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (instance_id) DO UPDATE SET name = excluded.name, url = excluded.url, via = excluded.via, last_seen_at = excluded.last_seen_at`,
      row.instance_id, row.name, row.url, row.via, row.last_seen_at,
    );
  }

  discoveredById(r: Reader, instanceId: string): Promise<MeshDiscoveredRow | undefined> {
    return this.db.get<MeshDiscoveredRow>(r, "SELECT instance_id, name, url, via, last_seen_at FROM mesh_discovered WHERE instance_id = ?", instanceId);
  }

  listDiscovered(r: Reader, limit: number): Promise<MeshDiscoveredRow[]> {
    return this.db.all<MeshDiscoveredRow>(
      r,
      "SELECT instance_id, name, url, via, last_seen_at FROM mesh_discovered ORDER BY last_seen_at DESC, instance_id LIMIT ?",
      limit,
    );
  }

  async pruneDiscovered(tx: Tx, before: string, keep: number): Promise<number> {
    const stale = await this.db.run(tx, "DELETE FROM mesh_discovered WHERE last_seen_at < ?", before);
    const over = await this.db.run(
      tx,
      `DELETE FROM mesh_discovered WHERE instance_id NOT IN
         (SELECT instance_id FROM mesh_discovered ORDER BY last_seen_at DESC, instance_id LIMIT ?)`,
      keep,
    );
    return stale + over;
  }

  async linkedPeers(r: Reader, peerInstanceIds: readonly string[]): Promise<Set<string>> {
    if (peerInstanceIds.length === 0) return new Set();
    const listed = this.db.dialect.inList("peer_instance_id", peerInstanceIds);
    const rows = await this.db.all<{ peer_instance_id: string }>(r, `SELECT peer_instance_id FROM mesh_links WHERE ${listed.sql}`, ...listed.params);
    return new Set(rows.map((row) => row.peer_instance_id));
  }

  async suppressions(r: Reader, ids: readonly string[]): Promise<Map<string, MeshSuppressionRow>> {
    if (ids.length === 0) return new Map();
    const listed = this.db.dialect.inList("memory_id", ids);
    const rows = await this.db.all<MeshSuppressionRow>(
      r,
      `SELECT memory_id, origin, version, suppressed_by, suppressed_at FROM mesh_suppressions WHERE ${listed.sql}`,
      ...listed.params,
    );
    return new Map(rows.map((row) => [row.memory_id, row]));
  }

  async suppress(tx: Tx, row: MeshSuppressionRow): Promise<void> {
    await this.db.run(
      tx,
      `INSERT INTO mesh_suppressions (memory_id, origin, version, suppressed_by, suppressed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (memory_id) DO UPDATE SET origin = excluded.origin, version = excluded.version, suppressed_by = excluded.suppressed_by,
         suppressed_at = excluded.suppressed_at`,
      row.memory_id, row.origin, row.version, row.suppressed_by, row.suppressed_at,
    );
  }

  async unsuppress(tx: Tx, memoryId: string): Promise<void> {
    await this.db.run(tx, "DELETE FROM mesh_suppressions WHERE memory_id = ?", memoryId);
  }

  async heldEntries(r: Reader, ids: readonly string[]): Promise<Map<string, HeldEntry>> {
    if (ids.length === 0) return new Map();
    const listed = this.db.dialect.inList("m.id", ids);
    const rows = await this.db.all<HeldEntry>(
      r,
      `SELECT ${MEMORY_COLUMNS}, m.origin FROM memory m WHERE ${listed.sql} ORDER BY m.pk${this.db.dialect.lockRows(r, "m")}`,
      ...listed.params,
    );
    return new Map(rows.map((row) => [row.id, row]));
  }

  async setOrigin(tx: Tx, pk: number, origin: string): Promise<void> {
    await this.db.run(tx, "UPDATE memory SET origin = ? WHERE pk = ?", origin, pk);
  }
}
