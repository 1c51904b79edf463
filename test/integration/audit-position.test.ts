import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditPosition, RESTORES_FILE } from "../../src/events/audit.js";
import { connect, type Db } from "../../src/store/sqlite/connection.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { tempDir } from "../helpers/server.js";

/**
 * Where the audit log resumes, against a real database and audit files laid out as a server over
 * several days would have left them: a restore is noticed once, and nothing is appended twice or skipped.
 */

interface Written {
  seq: number;
  id: string;
  day: string;
}

const opened: { store: SqliteStore; db: Db }[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const { store, db } of opened.splice(0)) {
    db.close();
    await store.close();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Fixture {
  store: SqliteStore;
  /** A connection of its own to the store's file, for what a restore or retention does to it. */
  db: Db;
  audit: string;
  /** Stores an event dated `day`, as the bus would. */
  emit: (day: string) => Promise<Written>;
  /** Stores one event per day given, in that order. */
  emitAll: (...days: string[]) => Promise<Written[]>;
  /** Appends the events' lines to their days' files, as the audit log would. */
  audited: (...events: Written[]) => void;
}

function setUp(): Fixture {
  const dir = tempDir("cairn-audit-position-");
  dirs.push(dir);
  const dbFile = join(dir, "cairn.db");
  const store = SqliteStore.open(dbFile);
  const db = connect(dbFile);
  opened.push({ store, db });
  const audit = join(dir, "audit");
  mkdirSync(join(audit, "events"), { recursive: true });
  const emit = async (day: string): Promise<Written> => {
    const id = randomUUID();
    const row = { id, type: "test.marker", agent_id: "ann", project: null, private_to: null, payload: "{}", created_at: `${day}T10:00:00.000Z` };
    return { seq: await store.transaction((tx) => store.events.insert(tx, row)), id, day };
  };
  return {
    store,
    db,
    audit,
    emit,
    emitAll: async (...days) => {
      const written: Written[] = [];
      for (const day of days) written.push(await emit(day));
      return written;
    },
    audited: (...events) => {
      for (const event of events) {
        const line = JSON.stringify({ seq: event.seq, id: event.id, type: "test.marker", created_at: `${event.day}T10:00:00.000Z` });
        appendFileSync(join(audit, "events", `${event.day}.jsonl`), `${line}\n`);
      }
    },
  };
}

const deleteAfter = (db: Db, seq: number): void => void db.run("DELETE FROM events WHERE seq > ?", seq);

describe("the audit log's resume point", () => {
  it("is the last audited event while the database is ahead of the log", async () => {
    const { store, audit, emitAll, audited } = setUp();
    const events = await emitAll("2026-01-01", "2026-01-01", "2026-01-02", "2026-01-02", "2026-01-02");
    audited(...events.slice(0, 4));
    expect(await auditPosition(store, audit)).toEqual({ resumeAfter: events[3]?.seq, restore: null });
  });

  it("after a restore is the database's last event, then where the continued log ends", async () => {
    const { store, db, audit, emitAll, audited } = setUp();
    // Day one up to the backup (seq 5), day two past it (seq 8): all audited.
    const dayOne = await emitAll("2026-01-01", "2026-01-01", "2026-01-01");
    const dayTwo = await emitAll("2026-01-02", "2026-01-02", "2026-01-02", "2026-01-02", "2026-01-02");
    audited(...dayOne, ...dayTwo);
    // The backup taken at seq 5 is restored: seqs 6 to 8 are gone from the database.
    deleteAfter(db, 5);
    db.run("UPDATE sqlite_sequence SET seq = 5 WHERE name = 'events'");
    const first = await auditPosition(store, audit);
    expect(first).toEqual({ resumeAfter: 5, restore: { audit_last_seq: 8, database_last_seq: 5, recorded: false } });

    // serve records it; then new events reuse seqs 6 and 7 and the process dies before appending them.
    appendFileSync(join(audit, RESTORES_FILE), `${JSON.stringify({ at: "2026-01-03T00:00:00.000Z", audit_last_seq: 8, database_last_seq: 5 })}\n`);
    const dayThree = await emitAll("2026-01-03", "2026-01-03");
    expect(dayThree.map((event) => event.seq)).toEqual([6, 7]);
    expect(await auditPosition(store, audit)).toEqual({ resumeAfter: 5, restore: { audit_last_seq: 8, database_last_seq: 5, recorded: true } });

    // Once appended, the continued log's own end is the resume point.
    audited(...dayThree);
    expect((await auditPosition(store, audit)).resumeAfter).toBe(7);
    // Past the old history's last seq, the restore no longer matters.
    const later = await emitAll("2026-01-03", "2026-01-03");
    audited(...later);
    expect(await auditPosition(store, audit)).toEqual({ resumeAfter: later[1]?.seq, restore: null });
  });

  it("does not take pruned events for a restore", async () => {
    const { store, db, audit, emit, emitAll, audited } = setUp();
    const events = await emitAll("2026-01-01", "2026-01-01", "2026-01-02");
    audited(...events);
    // Everything past retention is pruned; the sequence goes on.
    db.run("DELETE FROM events");
    const next = await emit("2026-02-01");
    expect(await auditPosition(store, audit)).toEqual({ resumeAfter: events[2]?.seq, restore: null });
    expect(next.seq).toBe((events[2]?.seq ?? 0) + 1);
  });
});
