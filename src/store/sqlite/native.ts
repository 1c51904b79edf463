import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";

// better-sqlite3 is a native module: `npm ci` downloads a prebuilt binary from GitHub or compiles
// one against Node's headers (from nodejs.org unless `--nodedir` names local ones). Where neither
// is reachable the install leaves no binary, and the first open fails with a message about a
// "bindings file" that says nothing of why or what to do. These words say both.

const HOW_TO_BUILD =
  "build it against local Node headers: `npm rebuild better-sqlite3 --nodedir=/usr` (Debian: apt-get install nodejs-dev or libnode-dev and a C++ compiler; elsewhere the directory holding include/node) — see the README's install section";

/** The cause and remedy when `error` is better-sqlite3 failing to load its native binary; null for any other error. */
function nativeModuleProblem(error: unknown): string | null {
  const message = error instanceof Error ? error.message : String(error);
  if (/Could not locate the bindings file|better_sqlite3\.node/.test(message) && !/NODE_MODULE_VERSION/.test(message)) {
    return `SQLite's native module (better-sqlite3) was not installed: npm ci could neither download a prebuilt binary nor compile one. ${capitalised(HOW_TO_BUILD)}`;
  }
  if (/NODE_MODULE_VERSION|was compiled against a different Node\.js version/.test(message)) {
    return `SQLite's native module (better-sqlite3) was built for another version of Node than ${process.version}: run npm rebuild better-sqlite3 (or, offline, ${HOW_TO_BUILD})`;
  }
  return null;
}

const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** An Error whose message is the problem's cause and remedy, the original kept as its cause. */
export function explainedNativeError(error: unknown): unknown {
  const problem = nativeModuleProblem(error);
  return problem === null ? error : new Error(problem, { cause: error });
}

/** Whether SQLite and its vector extension load here: null, or what is wrong and what to do. */
export function sqliteLoadProblem(): string | null {
  try {
    const probe = new Database(":memory:");
    try {
      sqliteVec.load(probe);
    } finally {
      probe.close();
    }
    return null;
  } catch (error) {
    return nativeModuleProblem(error) ?? (error instanceof Error ? error.message : String(error));
  }
}
