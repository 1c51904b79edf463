import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test as base } from "vitest";
import type { StartOptions } from "../../src/app.js";
import { startFakeLlm } from "./fake-llm.js";
import { startTestServer, tempDir } from "./server.js";

/**
 * `test` with a `server` of the test's own: started (on an empty data directory) for the test that
 * asks for it, and closed after it, so no test sees another's data whatever order they run in.
 * A `describe` sets the server's environment or options for its tests with
 * `it.override("serverEnv", { … })` or `it.override("serverOptions", { … })`, called on the very
 * `it` its tests are declared with: an override on another extension of `test` does not reach them.
 * `fake`: the fake LLM (a real HTTP server on loopback), answering "{}" until told otherwise.
 */
export const test = base
  .extend("serverEnv", {} as Record<string, string>)
  .extend("serverOptions", {} as StartOptions)
  .extend("server", async ({ serverEnv, serverOptions }, { onCleanup }) => {
    const server = await startTestServer(serverEnv, serverOptions);
    onCleanup(() => server.close());
    return server;
  })
  // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
  .extend("fake", async ({}, { onCleanup }) => {
    const fake = await startFakeLlm();
    onCleanup(() => fake.close());
    return fake;
  });

/** The same `test`, for files whose tests read `it("…")`. */
export const it = test;

/**
 * `test` with `home`, a home directory of the test's own (removed after it), holding an empty
 * directory `inner` (`dir`) where scripts and hosts start.
 */
export const withHome = (prefix: string, inner: string) =>
  test
    // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
    .extend("home", ({}, { onCleanup }) => {
      const home = tempDir(prefix);
      mkdirSync(join(home, inner));
      onCleanup(() => rmSync(home, { recursive: true, force: true }));
      return home;
    })
    .extend("dir", ({ home }) => join(home, inner));
