import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

export interface TokenRow {
  token_hash: Buffer;
  agent_id: string;
  key_hash: Buffer;
  created_at: string;
  expires_at: string;
}

export const TOKEN_ROW_COLUMNS = rowColumns<TokenRow>("oauth_tokens", { token_hash: true, agent_id: true, key_hash: true, created_at: true, expires_at: true });

export interface OAuthStore {
  insert(tx: Tx, row: TokenRow): Promise<void>;
  byHash(r: Reader, hash: Buffer): Promise<TokenRow | undefined>;
  deleteExpired(tx: Tx, nowIso: string): Promise<number>;
  deleteForAgent(tx: Tx, agentId: string): Promise<number>;
}
