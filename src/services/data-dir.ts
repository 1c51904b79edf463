import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { Config } from "../core/config.js";
import { InternalError } from "../core/errors.js";
import type { Logger } from "../core/log.js";

/**
 * Creates DATA_DIR (0700) with its missing parents one level at a time: Node's recursive mkdir
 * spins for ever under a path the kernel refuses without EEXIST (/proc). Whatever is in the way is
 * said plainly, by the setting's name.
 */
export function ensureDataDir(config: Config, log: Logger): void {
  const dir = config.DATA_DIR;
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new InternalError("setup", `DATA_DIR ${dir} exists and is not a directory; point DATA_DIR at a directory`);
    if ((statSync(dir).mode & 0o077) !== 0) log.warn("DATA_DIR is readable by other users; chmod 700 it", { data_dir: dir });
    return;
  }
  const missing: string[] = [];
  for (let current = dir; !existsSync(current); current = dirname(current)) missing.unshift(current);
  for (const path of missing) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      // Made meanwhile: a server's embedding thread, started first, creates DATA_DIR/models for a
      // model it downloads, with its parents.
      if (code === "EEXIST" && existsSync(path) && statSync(path).isDirectory()) continue;
      throw new InternalError("setup", `cannot create DATA_DIR ${dir}: creating ${path} failed (${code}); point DATA_DIR at a writable directory`, { cause: error });
    }
  }
  chmodSync(dir, 0o700);
}
