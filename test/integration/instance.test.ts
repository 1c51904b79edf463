import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostSlug } from "../../src/core/config.js";
import type { Health } from "../../src/wire/health.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.js";

/** CONTRACT §11: instance identity and secrets at rest survive restarts; a server with another key refuses to start. */

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = tempDir("cairn-instance-");
  dirs.push(dir);
  return dir;
}

async function serverOn(dataDir: string, env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer({ DATA_DIR: dataDir, ...env });
  servers.push(server);
  return server;
}

async function stop(server: TestServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

describe("instance identity", () => {
  it("is made on the first start, shown by /health, and the same after a restart", async () => {
    const dir = scratch();
    const first = await serverOn(dir, { INSTANCE_NAME: "team-a" });
    const before = (await first.request<Health>("/health")).body;
    expect(before.instance_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(before.instance_name).toBe("team-a");
    const key = readFileSync(join(dir, "secret.key"));
    expect(key.length).toBe(32);
    expect(statSync(join(dir, "secret.key")).mode & 0o777).toBe(0o600);
    await stop(first);

    const again = await serverOn(dir);
    const after = (await again.request<Health>("/health")).body;
    expect(after.instance_id).toBe(before.instance_id);
    expect(after.instance_name).toBe(hostSlug(hostname()));
    expect(readFileSync(join(dir, "secret.key")).equals(key)).toBe(true);
  });

  it("differs between installations", async () => {
    const one = await serverOn(scratch());
    const two = await serverOn(scratch());
    expect((await one.request<Health>("/health")).body.instance_id).not.toBe((await two.request<Health>("/health")).body.instance_id);
  });

  it("refuses a name that is not a slug", async () => {
    await expect(startTestServer({ DATA_DIR: scratch(), INSTANCE_NAME: "Team A" })).rejects.toThrow(/INSTANCE_NAME/);
  });
});

describe("the secret key", () => {
  it("that is not the database's stops the server at start, and cairn doctor says so", async () => {
    const dir = scratch();
    await stop(await serverOn(dir));
    const ok = await runCli(["doctor"], cliEnv(dir));
    expect(ok.stdout).toMatch(/^ok\s+secret key: .*secret\.key mode 600$/m);
    expect(ok.stdout).toMatch(/^ok\s+secret key matches: /m);

    writeFileSync(join(dir, "secret.key"), randomBytes(32), { mode: 0o600 });
    await expect(startTestServer({ DATA_DIR: dir })).rejects.toThrow(/secret\.key is not the key this database's secrets are encrypted with/);
    const wrong = await runCli(["doctor"], cliEnv(dir));
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/^FAIL\s+secret key matches: the database's secrets are encrypted with another key/m);
  });

  it("is checked by cairn doctor for its mode and size", async () => {
    const dir = scratch();
    await stop(await serverOn(dir));
    const path = join(dir, "secret.key");
    chmodSync(path, 0o644);
    expect((await runCli(["doctor"], cliEnv(dir))).stdout).toMatch(/^FAIL\s+secret key: .*mode 644 \(should be 600\)$/m);
    writeFileSync(path, randomBytes(16), { mode: 0o600 });
    chmodSync(path, 0o600);
    expect((await runCli(["doctor"], cliEnv(dir))).stdout).toMatch(/^FAIL\s+secret key: .*holds 16 bytes, not 32/m);
  });
});
