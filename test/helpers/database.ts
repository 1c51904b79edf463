import { join } from "node:path";
import { connect, type Db } from "../../src/store/sqlite/connection.js";

/**
 * Runs `work` on a connection of its own to the database of the server in `dataDir`, closed after.
 * The server runs WAL: this connection reads what the server has committed, and the server's next
 * read sees what it writes.
 */
export function withDatabase<T>(dataDir: string, work: (db: Db) => T): T {
  const db = connect(join(dataDir, "cairn.db"));
  try {
    return work(db);
  } finally {
    db.close();
  }
}
