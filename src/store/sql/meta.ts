import type { MetaStore } from "../meta.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

export class SqlMeta implements MetaStore {
  constructor(private readonly db: SqlDb) {}

  async get(r: Reader, key: string): Promise<string | undefined> {
    return (await this.db.get<{ value: string }>(r, "SELECT value FROM meta WHERE key = ?", key))?.value;
  }

  async claim(tx: Tx, key: string, value: string): Promise<string> {
    await this.db.run(tx, "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, value);
    return (await this.get(tx, key)) ?? value;
  }
}
