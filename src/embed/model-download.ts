import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { extract } from "tar";
import { OutboundFetcher } from "../net/fetch.js";
import { defaultOutboundSettings } from "../net/policy.js";
import { safeUrl } from "../net/safe-url.js";

/** Models fetched on first use (an explicit opt-in to an outbound call): the folder name fastembed's archives use. */
export const NAMED_MODELS = { "bge-small-en-v1.5": "fast-bge-small-en-v1.5" } as const;
export type NamedModel = keyof typeof NAMED_MODELS;


// A server that never stops sending must not fill the disk, nor hold the download forever.
const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 15 * 60_000;
const FILES = ["model_optimized.onnx", "tokenizer.json", "config.json", "tokenizer_config.json", "special_tokens_map.json"];

/**
 * The model's folder under `cacheDir`, downloading and unpacking it the first time. Nothing is
 * trusted half-done: the archive is written under a temporary name and unpacked into a temporary
 * folder, and only a complete folder is moved into place. `baseUrl` is the operator's
 * (EMBEDDING_MODEL_URL), so the outbound rules are the `operator` policy's: a mirror on the
 * private network is fine; OUTBOUND_ALLOWLIST (`allowlist`) relaxes the rest.
 */
export async function downloadNamedModel(model: NamedModel, cacheDir: string, baseUrl: string, allowlist: readonly string[] = []): Promise<string> {
  const name = NAMED_MODELS[model];
  const dir = join(cacheDir, name);
  if (FILES.every((file) => existsSync(join(dir, file)))) return dir;
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const archive = join(cacheDir, `${name}.tar.gz.partial`);
  const unpacked = join(cacheDir, `${name}.partial`);
  try {
    const fetcher = new OutboundFetcher({ settings: { ...defaultOutboundSettings, allowlist } });
    const response = await fetcher.stream(`${baseUrl.replace(/\/+$/, "")}/${name}.tar.gz`, {
      policy: "operator",
      maxBodyBytes: MAX_ARCHIVE_BYTES,
      timeoutMs: DOWNLOAD_TIMEOUT_MS,
    });
    if (response.status < 200 || response.status > 299) {
      response.body.destroy();
      throw new Error(`downloading ${model} from ${safeUrl(response.url)} failed: HTTP ${response.status}`);
    }
    await pipeline(response.body, createWriteStream(archive, { mode: 0o600 }));
    rmSync(unpacked, { recursive: true, force: true });
    mkdirSync(unpacked, { recursive: true });
    // Only regular files and folders, and never outside the target (tar refuses absolute paths and `..`).
    await extract({ file: archive, cwd: unpacked, strict: true, filter: (_path, entry) => "type" in entry && (entry.type === "File" || entry.type === "Directory") });
    const inner = join(unpacked, name);
    const missing = FILES.filter((file) => !existsSync(join(inner, file)));
    if (missing.length > 0) throw new Error(`the ${model} archive lacks ${missing.join(", ")}`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(inner, dir);
    return dir;
  } finally {
    rmSync(archive, { force: true });
    rmSync(unpacked, { recursive: true, force: true });
  }
}
