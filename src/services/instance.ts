import { randomUUID } from "node:crypto";
import type { Config } from "../core/config.js";
import { InternalError } from "../core/errors.js";
import { loadSecretKey, open, seal } from "../core/secret-box.js";
import type { Store } from "../store/store.js";

export const INSTANCE_ID = "instance_id";
/** A known text sealed under the installation's key, so a server holding another key notices at start. */
export const SECRET_KEY_CHECK = "secret_key_check";
const CHECK_TEXT = "cairn secret key check";

/** Who this installation is to peers and feed readers, and how it keeps the secrets it must send. */
export interface Instance {
  /** Created on the first start of the database, shared by every server on it. */
  readonly id: string;
  readonly name: string;
  /** Encrypts a secret for storage (AES-256-GCM under DATA_DIR/secret.key). */
  seal(plaintext: string): string;
  /** The secret `seal` stored, or null when it was sealed under another key or altered. */
  open(sealed: string): string | null;
}

/** Whether `sealed` (the database's check value) opens under `key` to the text sealed at creation. */
export const keyOpensCheck = (key: Buffer, sealed: string): boolean => open(key, sealed) === CHECK_TEXT;

/**
 * The instance's identity and key, made on first start. Servers sharing a database must share the
 * key too (as they share credentials.json): one with another key refuses to start, rather than
 * failing later on every secret it cannot read.
 */
export async function openInstance(store: Store, config: Pick<Config, "DATA_DIR" | "INSTANCE_NAME">): Promise<Instance> {
  const key = loadSecretKey(config.DATA_DIR);
  const { id, check } = await store.transaction(async (tx) => ({
    id: await store.meta.claim(tx, INSTANCE_ID, randomUUID()),
    check: await store.meta.claim(tx, SECRET_KEY_CHECK, seal(key, CHECK_TEXT)),
  }));
  if (!keyOpensCheck(key, check)) {
    throw new InternalError(
      "setup",
      "DATA_DIR/secret.key is not the key this database's secrets are encrypted with: copy secret.key from the data directory of the server that first started on this database (docs/operations.md)",
    );
  }
  return {
    id,
    name: config.INSTANCE_NAME,
    seal: (plaintext) => seal(key, plaintext),
    open: (sealed) => open(key, sealed),
  };
}
