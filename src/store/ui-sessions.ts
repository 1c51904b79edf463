import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

export interface UiSessionRow {
  token_hash: Buffer;
  agent_id: string;
  created_at: string;
  last_used_at: string;
}

export const UI_SESSION_ROW_COLUMNS = rowColumns<UiSessionRow>("ui_sessions", { token_hash: true, agent_id: true, created_at: true, last_used_at: true });

export interface UiSessionStore {
  insert(tx: Tx, row: UiSessionRow): Promise<void>;
  byHash(r: Reader, hash: Buffer): Promise<UiSessionRow | undefined>;
  touch(tx: Tx, hash: Buffer, at: string): Promise<void>;
  delete(tx: Tx, hash: Buffer): Promise<number>;
  deleteIdle(tx: Tx, usedBefore: string): Promise<number>;
  insertLoginLink(tx: Tx, hash: Buffer, createdAt: string, expiresAt: string): Promise<void>;
  /** Uses up a live link: true once for each link, however many processes race for it. */
  takeLoginLink(tx: Tx, hash: Buffer, at: string): Promise<boolean>;
  loginLinkIsLive(r: Reader, hash: Buffer, at: string): Promise<boolean>;
  deleteExpiredLoginLinks(tx: Tx, at: string): Promise<number>;
}
