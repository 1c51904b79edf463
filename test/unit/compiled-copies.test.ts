import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compiledCopiesCurrent } from "../../src/core/compiled-copies.js";
import { tempDir } from "../helpers/server.js";

// A worker started from the sources runs the build's copy only while every copy is at least as
// new as its source; otherwise it must load the sources, never a stale copy.

describe("compiledCopiesCurrent", () => {
  let root = "";
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** Writes `path` under the tree with its modification time `seconds` after a fixed moment. */
  const file = (path: string, seconds: number): void => {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, "export {};\n");
    const at = 1_800_000_000 + seconds;
    utimesSync(full, at, at);
  };
  /** A tree whose build is current: two sources, one in a folder, each compiled after it changed. */
  const built = (): void => {
    root = tempDir("cairn-compiled-copies-");
    file("src/a.ts", 0);
    file("src/sub/b.ts", 0);
    file("dist/a.js", 10);
    file("dist/sub/b.js", 10);
  };
  const current = (): boolean => compiledCopiesCurrent(join(root, "src"), join(root, "dist"));

  it("is true when every source has a copy written after it, whatever else the tree holds", () => {
    built();
    file("src/types.d.ts", 20);
    file("src/sub/row-scan.wat", 20);
    file("src/bundle.mjs", 20);
    expect(current()).toBe(true);
  });

  it("is false for a source changed since the build", () => {
    built();
    file("src/sub/b.ts", 20);
    expect(current()).toBe(false);
  });

  it("is false for a source added since the build, or a copy deleted", () => {
    built();
    file("src/sub/c.ts", 5);
    expect(current()).toBe(false);
    rmSync(join(root, "src/sub/c.ts"));
    expect(current()).toBe(true);
    rmSync(join(root, "dist/a.js"));
    expect(current()).toBe(false);
  });
});
