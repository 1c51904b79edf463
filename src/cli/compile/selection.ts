import { isAbsolute, relative, resolve, sep } from "node:path";
import { UsageError } from "../output.js";
import { compileExclusions, withoutExcluded } from "./exclusions.js";
import { recentlyChangedFiles, repositoryFiles } from "./git.js";

/**
 * What one `cairn compile` looks at: the tracked files to compile, and the part of the repository
 * whose anchors on the server it answers for (an anchor there whose file or symbol is gone is pruned).
 */
export interface Selection {
  /** Repository-relative, `/`-separated paths, some of which may be gone from disk. */
  files: string[];
  /** "all": the whole project; otherwise paths, each covering itself and everything under it. */
  scope: "all" | string[];
  /** How many files the ignore rules left out (exclusions.ts). */
  excluded: number;
}

/** `path` is `prefix` or lies under it. */
export const covers = (prefix: string, path: string): boolean => path === prefix || path.startsWith(`${prefix}/`);

/** A path given on the command line (relative to `cwd`) as a repository-relative path; "" is the root. */
function repositoryPath(root: string, cwd: string, given: string): string {
  const inside = relative(root, resolve(cwd, given));
  if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new UsageError(`${given} is outside the repository ${root}`);
  }
  return inside.split(sep).join("/");
}

/**
 * `--all`: every file of the repository (tracked, or new and not ignored). Paths: those at or under
 * each. Neither: the files the last commit changed and those changed since (what the post-commit
 * hook compiles). Then the ignore rules (the defaults, `.cairnignore`, `--exclude`) leave files out;
 * an anchor in scope whose file they leave out is pruned like one whose file is gone.
 */
export async function selectFiles(root: string, cwd: string, paths: string[], all: boolean, excludes: readonly string[] = []): Promise<Selection> {
  if (all && paths.length > 0) throw new UsageError("give paths or --all, not both");
  const rules = await compileExclusions(root, excludes);
  const kept = (files: string[]): { files: string[]; excluded: number } => {
    const left = withoutExcluded(rules, files);
    return { files: left, excluded: files.length - left.length };
  };
  if (all) return { ...kept(await repositoryFiles(root)), scope: "all" };
  if (paths.length === 0) {
    const files = await recentlyChangedFiles(root);
    return { ...kept(files), scope: files };
  }
  const prefixes = [...new Set(paths.map((given) => repositoryPath(root, cwd, given)))];
  if (prefixes.includes("")) return { ...kept(await repositoryFiles(root)), scope: "all" };
  const files = await repositoryFiles(root);
  return { ...kept(files.filter((path) => prefixes.some((prefix) => covers(prefix, path)))), scope: prefixes };
}
