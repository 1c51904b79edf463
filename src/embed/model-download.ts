import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extract } from "tar";

/** Models fetched on first use (an explicit opt-in to an outbound call): the folder name fastembed's archives use. */
export const NAMED_MODELS = { "bge-small-en-v1.5": "fast-bge-small-en-v1.5" } as const;
export type NamedModel = keyof typeof NAMED_MODELS;


const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;
const FILES = ["model_optimized.onnx", "tokenizer.json", "config.json", "tokenizer_config.json", "special_tokens_map.json"];

/** Counts bytes through, failing past `limit`: a server that never stops sending must not fill the disk. */
function capped(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > limit ? new Error(`the model archive exceeds ${limit} bytes`) : null, chunk);
    },
  });
}

/**
 * The model's folder under `cacheDir`, downloading and unpacking it the first time. Nothing is
 * trusted half-done: the archive is written under a temporary name and unpacked into a temporary
 * folder, and only a complete folder is moved into place.
 */
export async function downloadNamedModel(model: NamedModel, cacheDir: string, baseUrl: string): Promise<string> {
  const name = NAMED_MODELS[model];
  const dir = join(cacheDir, name);
  if (FILES.every((file) => existsSync(join(dir, file)))) return dir;
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const archive = join(cacheDir, `${name}.tar.gz.partial`);
  const unpacked = join(cacheDir, `${name}.partial`);
  try {
    const response = await fetch(`${baseUrl.replace(/\/+$/, "")}/${name}.tar.gz`, { redirect: "follow", signal: AbortSignal.timeout(15 * 60_000) });
    if (!response.ok || !response.body) throw new Error(`downloading ${model} failed: HTTP ${response.status}`);
    await pipeline(Readable.fromWeb(response.body), capped(MAX_ARCHIVE_BYTES), createWriteStream(archive, { mode: 0o600 }));
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
