import type * as NodeFs from "node:fs";
import type { ConfigSyntax } from "../hosts/types.js";
import type { mergeJsonEntry, MergeOutcome } from "./json-entry.js";
import type { mergeTomlTable } from "./toml-table.js";

export interface MergeIo {
  fs: Pick<typeof NodeFs, "readFileSync" | "writeFileSync" | "copyFileSync" | "constants">;
  out(line: string): void;
  err(line: string): void;
  now(): Date;
}

export interface Mergers {
  mergeJsonEntry: typeof mergeJsonEntry;
  mergeTomlTable: typeof mergeTomlTable;
}

/**
 * Puts Cairn's entry into the configuration at `path`, which exists: `fresh` is the whole file
 * Cairn would write, whose `cairn` entry (JSON) or table (TOML) is what goes in. The original is
 * copied beside it first (`<path>.cairn-<UTC time>.bak`, never over an existing file), and only
 * when the file changes, so a second run changes nothing. Returns 0 when the entry is there, 3
 * when the file was left as it was (it does not read, or it could not be backed up or written).
 *
 * Self-contained on purpose: the onboarding script runs this function's source text with node on
 * the user's machine (see program.ts), so it may use nothing from outside its own body.
 */
export function applyConfigMerge(io: MergeIo, mergers: Mergers, path: string, syntax: ConfigSyntax, fresh: string, label: string): number {
  const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  let original: string;
  try {
    original = io.fs.readFileSync(path, "utf8");
  } catch (error) {
    io.err(`cairn onboard: ${path} could not be read (${reason(error)}); it is left as it is`);
    return 3;
  }
  const wanted = fresh.endsWith("\n") ? fresh : `${fresh}\n`;
  let outcome: MergeOutcome;
  if (original.trim() === "") outcome = { text: wanted };
  else if (syntax === "toml") outcome = mergers.mergeTomlTable(original, wanted);
  else {
    const rendered = JSON.parse(wanted) as Record<string, Record<string, unknown>>;
    const container = Object.keys(rendered).find((key) => typeof rendered[key] === "object" && rendered[key] !== null && "cairn" in rendered[key]) ?? "";
    const dialect = { comments: syntax !== "json", trailingCommas: syntax === "jsonc" };
    outcome = mergers.mergeJsonEntry(original, container, "cairn", rendered[container]?.cairn, dialect);
  }
  if ("refused" in outcome) {
    io.err(`cairn onboard: ${path} ${outcome.refused}; it is left as it is`);
    return 3;
  }
  if (outcome.text === original) {
    io.out(`cairn onboard: ${path} already connects ${label}; left as it is`);
    return 0;
  }

  // The backup is written before the file is touched, under a name no earlier run used.
  const stamp = io.now().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  let backup = "";
  for (let attempt = 1; backup === ""; attempt++) {
    const name = `${path}.cairn-${stamp}${attempt > 1 ? `-${attempt}` : ""}.bak`;
    try {
      io.fs.copyFileSync(path, name, io.fs.constants.COPYFILE_EXCL);
      backup = name;
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST" || attempt >= 50) {
        io.err(`cairn onboard: ${path} could not be backed up (${reason(error)}); it is left as it is`);
        return 3;
      }
    }
  }
  // Written in place, not renamed over: a configuration that is a symbolic link stays one, with its mode and owner.
  try {
    io.fs.writeFileSync(path, outcome.text);
  } catch (error) {
    io.err(`cairn onboard: ${path} could not be written (${reason(error)}); the original is in ${backup}`);
    return 3;
  }
  io.out(`cairn onboard: wrote cairn's entry into ${path} for ${label}, keeping everything else in it; the original is in ${backup}`);
  return 0;
}
