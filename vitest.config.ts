import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Two files at a time on two cores: a test that starts several processes may take twice as long
    // as alone. A hang still fails, later; no test asserts a timing.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Most files wait on servers, processes and browsers rather than compute: two at a time even on
    // two cores. A worker keeps its modules from one file to the next (no new process and no fresh
    // import of the whole server per file, which cost more than some files' tests), so a test never
    // leans on a module being loaded afresh: servers, stores and caches are made per test.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    isolate: false,
    // Files and the tests in them run in a new order on every run, so a test that leans on another's
    // leftovers fails somewhere rather than nowhere. The run prints its seed at its start and end;
    // `npx vitest run --sequence.seed=<seed>` repeats that order.
    sequence: { shuffle: true },
  },
});
