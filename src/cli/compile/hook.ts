import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { cliPath } from "../../core/paths.js";
import { hooksDirectory } from "./git.js";

/** The line that marks a post-commit hook as cairn's own, which a later install may rewrite. */
const HOOK_MARKER = "# cairn compile hook";

/** A hook that is not cairn's: left as it is, with the line that would add cairn to it. */
class ForeignHookError extends Error {
  constructor(
    readonly path: string,
    line: string,
  ) {
    super(`${path} exists and cairn did not write it, so cairn leaves it alone; to compile after each commit, add this line to it:\n  ${line}`);
    this.name = "ForeignHookError";
  }
}

const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/** The CLI this process runs (dist/src/cli.js), which the hook prefers to whatever `cairn` is on PATH. */


/**
 * The post-commit hook: `cairn compile` (the files the commit changed) in the background, its
 * output in the git directory's cairn-compile.log, and exit 0 whatever happens — no server, no
 * cairn, no node — so a commit never waits for Cairn or fails because of it.
 */
function hookScript(project: string | undefined): string {
  const node = shellQuote(process.execPath);
  const cli = shellQuote(cliPath);
  const projectArgs = project === undefined ? "" : ` --project ${shellQuote(project)}`;
  return `#!/bin/sh
${HOOK_MARKER}: written by \`cairn compile --install-hook\`, which rewrites it; delete it to stop.
# After each commit it compiles the files the commit changed into Cairn's memory, in the
# background (output in the git directory's cairn-compile.log), and always exits 0.
# A \`git commit FILE\` runs hooks with a temporary index that is gone by the time compile reads it.
unset GIT_INDEX_FILE
if [ -x ${node} ] && [ -f ${cli} ]; then
  set -- ${node} ${cli} compile
elif command -v cairn >/dev/null 2>&1; then
  set -- cairn compile
else
  exit 0
fi
log=$(git rev-parse --git-path cairn-compile.log 2>/dev/null) || log=/dev/null
if command -v nohup >/dev/null 2>&1; then set -- nohup "$@"; fi
("$@"${projectArgs} </dev/null >"$log" 2>&1 &) >/dev/null 2>&1
exit 0
`;
}

/** Writes cairn's post-commit hook where git looks for hooks (core.hooksPath respected); returns its path. */
export async function installHook(root: string, project: string | undefined): Promise<string> {
  const directory = await hooksDirectory(root);
  const path = join(directory, "post-commit");
  if (existsSync(path) && !readFileSync(path, "utf8").includes(HOOK_MARKER)) {
    const projectArgs = project === undefined ? "" : ` --project ${shellQuote(project)}`;
    throw new ForeignHookError(path, `(cairn compile${projectArgs} </dev/null >/dev/null 2>&1 &)`);
  }
  mkdirSync(directory, { recursive: true });
  writeFileSync(path, hookScript(project), { mode: 0o755 });
  // writeFileSync's mode applies only to a new file: an earlier hook of ours keeps its own.
  chmodSync(path, 0o755);
  return path;
}
