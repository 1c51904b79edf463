// One of the peers benchmark's concurrent writers, a process of its own as an agent host is:
// connects (argv[2], a JSON Target), says "ready", waits for "go" on stdin, writes argv[3] notes
// one after another, and prints one JSON line: the keys acknowledged and the failures.
import { createInterface } from "node:readline";
import { noteStream } from "./corpus.js";
import { connect, type Target } from "./peers-clients.js";

const target = JSON.parse(process.argv[2] ?? "{}") as Target;
const count = Number(process.argv[3] ?? 0);
const notes = noteStream(Number(process.argv[4] ?? 1));

const connection = await connect(target);
const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.once("line", () => resolve()));
process.stdout.write("ready\n");
await go;
const acked: string[] = [];
const failures: string[] = [];
for (let index = 0; index < count; index++) {
  try {
    acked.push(await connection.write(index, notes().content));
  } catch (error) {
    // A refused or lost write is counted, not retried: the benchmark reports what was acknowledged.
    if (failures.length < 5) failures.push(error instanceof Error ? error.message : String(error));
    else failures.push("");
  }
}
await connection.close();
process.stdout.write(`${JSON.stringify({ acked, failures: failures.length, firstFailures: failures.filter(Boolean) })}\n`);
lines.close();
process.exit(0);
