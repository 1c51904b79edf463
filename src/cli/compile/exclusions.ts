import { readFile } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";

/**
 * What `cairn compile` leaves out unless told otherwise: tests, fixtures and test data, vendored
 * and third-party code, and generated or built output. Their symbols describe how the code is
 * checked or where it came from, not what it does, and they would crowd what an agent asks about.
 * In .gitignore syntax; a `.cairnignore` line `!pattern` brings any of them back.
 */
const DEFAULT_EXCLUDES: readonly string[] = [
  // tests
  "test/",
  "tests/",
  "__tests__/",
  "spec/",
  "e2e/",
  "*.test.*",
  "*.spec.*",
  "*_test.go",
  "*_test.py",
  "test_*.py",
  "*Test.java",
  "*Tests.cs",
  // fixtures and test data
  "fixtures/",
  "__fixtures__/",
  "testdata/",
  "__mocks__/",
  // vendored and third-party code
  "vendor/",
  "third_party/",
  "third-party/",
  "node_modules/",
  // generated and built output
  "dist/",
  "build/",
  "out/",
  "generated/",
  "__generated__/",
  "*.generated.*",
  "*.gen.go",
  "*.pb.go",
  "*_pb2.py",
  "*.min.js",
  "*.d.ts",
  // the rules themselves
  "/.cairnignore",
];

const CAIRNIGNORE = ".cairnignore";

/**
 * The matcher for one repository: the defaults, then `.cairnignore` at its root (gitignore syntax,
 * where `!pattern` re-includes), then each `--exclude` pattern; later rules win, as in git.
 */
export async function compileExclusions(root: string, excludes: readonly string[]): Promise<Ignore> {
  const rules = ignore().add([...DEFAULT_EXCLUDES]);
  const own = await readFile(join(root, CAIRNIGNORE), "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return "";
    throw error;
  });
  return rules.add(own).add([...excludes]);
}

/** The repository-relative paths the rules leave in, in their order. */
export const withoutExcluded = (rules: Ignore, paths: readonly string[]): string[] => paths.filter((path) => !rules.ignores(path));
