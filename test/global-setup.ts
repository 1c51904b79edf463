import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { CHROMIUM, HAS_CHROMIUM, INSTALL_CHROMIUM } from "./helpers/browser.js";

/**
 * Before anything runs: every temporary file of this run (data directories, homes, the children's
 * files) goes under one directory, removed when the run ends, so a run leaves nothing behind even
 * where a test forgot to clean up. And says once when the browser tests will be skipped, and how
 * to run them. At the end, says again which order the run took (the shuffle's seed), where a
 * failure's reader looks first.
 */
export default function setup(project: TestProject): () => void {
  const runDir = mkdtempSync(join(tmpdir(), "cairn-test-run-"));
  process.env.TMPDIR = runDir;
  if (!HAS_CHROMIUM && !process.env.CI) {
    process.stderr.write(
      `\nnote: the web UI's browser tests (test/ui) are skipped: ${CHROMIUM} was not found.\n` +
        `      They drive Debian's Chromium; install it with \`${INSTALL_CHROMIUM}\` to run them (.ci/run always does).\n\n`,
    );
  }
  const { seed, shuffle } = project.config.sequence;
  return () => {
    rmSync(runDir, { recursive: true, force: true });
    if (shuffle) process.stderr.write(`\nshuffled with seed ${seed}: \`npx vitest run --sequence.seed=${seed}\` runs the same order\n`);
  };
}
