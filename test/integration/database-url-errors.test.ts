import { afterAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../helpers/cli.js";
import { adminSql, databaseUrl, onPostgres, POSTGRES_URL } from "../helpers/database.js";
import { tempDir } from "../helpers/server.js";
import { closedPort } from "../helpers/ports.js";

// A server whose DATABASE_URL cannot be used stops with one line naming the database (never its
// password) and what to do, where the driver's message alone names neither.

async function serveWith(url: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return runCli(["serve"], cliEnv(tempDir(), { DATABASE_URL: url }));
}

describe("cairn serve with a DATABASE_URL it cannot use", () => {
  it("names the address nothing answers at, and never the password", async () => {
    const port = await closedPort();
    const run = await serveWith(`postgres://cairn:hunter2@127.0.0.1:${port}/team?password=hunter3`);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `cairn: cannot open the PostgreSQL database postgres://cairn@127.0.0.1:${port}/team: nothing accepts connections at 127.0.0.1:${port}: is PostgreSQL running, and listening there?`,
    );
    expect(run.stderr).not.toContain("hunter");
    expect(run.stdout).not.toMatch(/^cairn http/m);
  });

  describe.runIf(onPostgres)("on a PostgreSQL server", () => {
    const role = `cairn_weak_${process.pid}`;
    const owned = `${role}_db`;
    afterAll(() => adminSql(`DROP DATABASE IF EXISTS "${owned}"`, `DROP ROLE IF EXISTS "${role}"`));

    it("says how to make a database that does not exist", async () => {
      const missing = databaseUrl(POSTGRES_URL as string, `cairn_missing_${process.pid}`);
      const run = await serveWith(missing);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`database "cairn_missing_${process.pid}" does not exist: create it first (createdb), or name a database that exists`);
    });

    it("says who must create pgvector when the role may not", async () => {
      adminSql(`CREATE ROLE "${role}" LOGIN`, `CREATE DATABASE "${owned}" OWNER "${role}"`);
      const url = new URL(databaseUrl(POSTGRES_URL as string, owned));
      url.username = role;
      url.password = "";
      const run = await serveWith(url.toString());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("permission denied to create extension \"vector\": this role may not create the pgvector extension; an administrator runs CREATE EXTENSION vector; in this database once");
    });
  });
});
