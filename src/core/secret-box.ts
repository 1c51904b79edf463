import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Marks the format, so a later change of algorithm can still read what this one wrote. */
const PREFIX = "v1:";

export const secretKeyPath = (dataDir: string): string => join(dataDir, "secret.key");

class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretKeyError";
  }
}

/**
 * The key that encrypts secrets the server must send (a peer's token): 32 random bytes in
 * DATA_DIR/secret.key, mode 0600, created once. Creation is exclusive, so of two servers starting
 * on one data directory the second reads the first's key rather than writing its own.
 */
export function loadSecretKey(dataDir: string): Buffer {
  const path = secretKeyPath(dataDir);
  if (!existsSync(path)) {
    try {
      const fd = openSync(path, "wx", 0o600);
      try {
        writeSync(fd, randomBytes(KEY_BYTES));
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return readSecretKey(path);
}

/** The key file as it is, or why it cannot serve: what `cairn doctor` checks, creating nothing. */
export function readSecretKey(path: string): Buffer {
  const key = readFileSync(path);
  if (key.length !== KEY_BYTES) throw new SecretKeyError(`${path} holds ${key.length} bytes, not ${KEY_BYTES}; restore it from a backup`);
  return key;
}

export const secretKeyMode = (path: string): number => statSync(path).mode & 0o777;

/** AES-256-GCM under `key`, with a fresh nonce: `v1:` and base64 of nonce, tag and ciphertext. */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
}

/** The plaintext `seal` sealed, or null when `sealed` was not sealed under `key` (or was altered). */
export function open(key: Buffer, sealed: string): string | null {
  if (!sealed.startsWith(PREFIX)) return null;
  const raw = Buffer.from(sealed.slice(PREFIX.length), "base64");
  if (raw.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
