import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Files and the tests in them run in a new order on every run, so a test that leans on another's
    // leftovers fails somewhere rather than nowhere. The run prints its seed at its start and end;
    // `npx vitest run --sequence.seed=<seed>` repeats that order.
    sequence: { shuffle: true },
  },
});
