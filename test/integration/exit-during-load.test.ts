import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { builtModule } from "../../src/core/paths.js";

/**
 * A process that starts loading the bundled model, then exits through `exitWhenSettled` after
 * `delayMs`: what a `cairn serve` whose store fails to open does while the model loads.
 */
function exitDuringLoad(delayMs: number): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const script = `
    const { embedderLoaderFor } = await import(${JSON.stringify(builtModule("embed/models.js").href)});
    const { exitWhenSettled } = await import(${JSON.stringify(builtModule("core/exit.js").href)});
    embedderLoaderFor({ EMBEDDING_MODEL: "use-lite", DATA_DIR: "/nonexistent" })().catch(() => undefined);
    setTimeout(() => void exitWhenSettled(3), ${delayMs});
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stderr })));
}

describe("exiting while the embedding model loads", () => {
  it("exits with the code asked for at any moment of the load, never by an abort", async () => {
    // onnxruntime-node aborted the process when it exited while its session was being created;
    // where in the load that falls depends on the machine, so the exits are spread over it.
    const delays = Array.from({ length: 32 }, (_, index) => index * 20);
    const results: Awaited<ReturnType<typeof exitDuringLoad>>[] = [];
    for (let start = 0; start < delays.length; start += 4) results.push(...(await Promise.all(delays.slice(start, start + 4).map(exitDuringLoad))));
    for (const result of results) {
      expect(result.stderr).not.toContain("terminate called");
      expect({ code: result.code, signal: result.signal }).toEqual({ code: 3, signal: null });
    }
  }, 120_000);
});
