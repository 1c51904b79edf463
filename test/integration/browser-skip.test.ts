import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

describe("npm test on a machine without Chromium", () => {
  it("skips the browser tests, says why and how to install it, and passes; in CI it never skips", () => {
    const run = (env: Record<string, string>) => {
      // The skip is the browser's business, not the database's: on SQLite the child needs no
      // template database of its own (making one on a busy PostgreSQL took over a minute).
      const { CI: _ci, CAIRN_TEST_DATABASE_URL: _database, ...rest } = process.env;
      return spawnSync(process.execPath, [resolve(ROOT, "node_modules/vitest/vitest.mjs"), "run", "test/ui/overview.test.ts"], {
        cwd: ROOT,
        env: { ...rest, CAIRN_TEST_CHROMIUM: "/nonexistent/chromium", ...env },
        encoding: "utf8",
        timeout: 120_000,
      });
    };
    const local = run({});
    expect(local.status).toBe(0);
    expect(local.stderr).toContain("browser tests (test/ui) are skipped: /nonexistent/chromium was not found");
    expect(local.stderr).toContain("sudo apt-get install chromium");
    expect(local.stdout).toMatch(/skipped/);
    expect(local.stdout).not.toMatch(/\d+ passed/);

    const ci = run({ CI: "true" });
    expect(ci.status).not.toBe(0);
    expect(ci.stderr + ci.stdout).not.toContain("are skipped");
  });
});
