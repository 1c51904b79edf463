import { execFile } from "node:child_process";
import { isAbsolute, resolve } from "node:path";
import { promisify } from "node:util";
import { UsageError } from "../output.js";

const run = promisify(execFile);

/** git's hash of the empty tree: what a root commit is compared with. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/**
 * `git ARGS` in `cwd`, without a shell. GIT_OPTIONAL_LOCKS=0 keeps status-like commands from
 * refreshing the index, so a compile running in the background never holds a lock the person
 * committing needs.
 */
async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run("git", args, { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } });
  return stdout;
}

const nulSeparated = (output: string): string[] => output.split("\0").filter((path) => path !== "");

/** The top directory of the work tree that holds `cwd`. */
export async function repositoryRoot(cwd: string): Promise<string> {
  try {
    return (await git(cwd, ["rev-parse", "--show-toplevel"])).trim();
  } catch {
    throw new UsageError(`cairn compile works in a git repository, and ${cwd} is not in one`);
  }
}

/**
 * Every tracked path, whether or not it is still on disk, and every new file git does not ignore
 * (an agent compiles before it commits): repository-relative, `/`-separated.
 */
export async function repositoryFiles(root: string): Promise<string[]> {
  return [...new Set(nulSeparated(await git(root, ["ls-files", "-z", "--full-name", "--cached", "--others", "--exclude-standard"])))];
}

const newFiles = async (root: string): Promise<string[]> => nulSeparated(await git(root, ["ls-files", "-z", "--full-name", "--others", "--exclude-standard"]));

/** The commit HEAD names, or undefined in a repository without commits. */
export async function headCommit(root: string): Promise<string | undefined> {
  try {
    return (await git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The paths the last commit changed, and those changed in the work tree since: the work tree
 * compared with HEAD's parent (with the empty tree for a root commit; everything before the first
 * commit), and new files. Renames count as a deletion and an addition, so the old path is pruned.
 */
export async function recentlyChangedFiles(root: string): Promise<string[]> {
  const head = await headCommit(root);
  if (head === undefined) return repositoryFiles(root);
  let base = EMPTY_TREE;
  try {
    base = (await git(root, ["rev-parse", "--verify", "--quiet", "HEAD^1^{commit}"])).trim() || EMPTY_TREE;
  } catch {
    // a root commit: everything in it is new
  }
  const changed = nulSeparated(await git(root, ["diff", "--name-only", "--no-renames", "-z", base, "--"]));
  return [...new Set([...changed, ...(await newFiles(root))])];
}

/** The hooks directory git runs hooks from (core.hooksPath respected), absolute. */
export async function hooksDirectory(root: string): Promise<string> {
  const path = (await git(root, ["rev-parse", "--git-path", "hooks"])).trim();
  return isAbsolute(path) ? path : resolve(root, path);
}
