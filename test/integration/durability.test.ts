import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { request, tempDir, testEnv, type Credentials } from "../helpers/server.js";

const root = join(import.meta.dirname, "..", "..");

/** Starts `cairn serve` as a real child process and resolves with its URL. */
function spawnServer(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(root, "dist", "src", "cli.js"), "serve"], {
    env: { ...process.env, ...testEnv(dataDir) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const match = /^cairn (http:\/\/\S+)$/.exec(line);
      if (match?.[1]) resolve({ child, url: match[1] });
    });
    child.once("exit", (code) => reject(new Error(`server exited early with ${code}`)));
  });
}

describe("durability", () => {
  const dataDir = tempDir();
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("keeps every acknowledged write when the server is killed with SIGKILL mid-stream", async () => {
    const first = await spawnServer(dataDir);
    const credentials = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8")) as {
      agents: { human: { api_key: string } };
    };
    const owner: Credentials = { agentId: "human", apiKey: credentials.agents.human.api_key };

    const acknowledged: string[] = [];
    let killed = false;
    const write = async (index: number): Promise<void> => {
      try {
        const response = await request<{ id: string }>(first.url, "/memory", {
          as: owner,
          body: { content: `durability probe ${index}: the build cache lives under .cache/${index}` },
        });
        if (response.status === 201) acknowledged.push(response.body.id);
        // Kill once a good share of writes has been acknowledged and many are still in flight.
        if (acknowledged.length === 150 && !killed) {
          killed = true;
          first.child.kill("SIGKILL");
        }
      } catch {
        // The connection died with the process: this write was never acknowledged.
      }
    };
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    await Promise.all(Array.from({ length: 500 }, (_, index) => write(index)));
    if (!killed) first.child.kill("SIGKILL");
    await exited;
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(150);

    const database = new Database(join(dataDir, "cairn.db"));
    expect(database.pragma("integrity_check", { simple: true })).toBe("ok");
    database.close();

    const second = await spawnServer(dataDir);
    try {
      const missing: string[] = [];
      for (const id of acknowledged) {
        const response = await request(second.url, `/memory/${id}`, { as: owner });
        if (response.status !== 200) missing.push(id);
      }
      expect(missing).toEqual([]);
    } finally {
      const stopped = new Promise((resolve) => second.child.once("exit", resolve));
      second.child.kill("SIGTERM");
      await stopped;
    }
  });
});
