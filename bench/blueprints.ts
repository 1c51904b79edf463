// Blueprint runs (CONTRACT §17): instantiating a 100-node plan (100 tasks and their dependencies
// in one transaction), completing run tasks whose node has an output schema and a done check, and
// completing the source of a 50-item fan-out (50 tasks created and the fan-in rewired in the
// completing transaction). One fresh server; each timed call is one request.
import { expectStatus, newDataDir, progress, rowOf, withServer, type Credentials, type RunResult, type Section, type ServerProcess } from "./lib.js";

export interface BlueprintBenchOptions {
  instantiations: number;
  completions: number;
  fanOuts: number;
}

const LAYERS = 10;
const WIDTH = 10;

/** 10 layers of 10 nodes; each node needs two of the layer before. */
function hundredNodes(): Record<string, unknown> {
  const nodes = [];
  for (let layer = 0; layer < LAYERS; layer += 1) {
    for (let column = 0; column < WIDTH; column += 1) {
      const needs = layer === 0 ? [] : [`n${layer - 1}_${column}`, `n${layer - 1}_${(column + 1) % WIDTH}`];
      nodes.push({ id: `n${layer}_${column}`, title: `Step ${layer}.${column} of {{params.release}}`, needs, tags: [`layer-${layer}`] });
    }
  }
  return { name: "hundred", title: "A hundred steps", project: null, params: [{ name: "release", type: "string", required: true }], nodes };
}

const contract = {
  name: "contract",
  title: "A checked step",
  project: null,
  nodes: [
    {
      id: "write",
      title: "Write the notes",
      output_schema: {
        type: "object",
        required: ["url", "pages", "sections"],
        properties: { url: { type: "string", minLength: 8 }, pages: { type: "integer", minimum: 1 }, sections: { type: "array", items: { type: "string" }, maxItems: 20 } },
        additionalProperties: false,
      },
      done_check: [{ kind: "memory", tag: "bench-notes" }],
    },
  ],
};

const fan = {
  name: "fan",
  title: "Publish everywhere",
  project: null,
  nodes: [
    { id: "list", title: "List the targets", output_schema: { type: "object", properties: { targets: { type: "array", items: { type: "string" } } } } },
    { id: "publish", title: "Publish to {{item}}", needs: ["list"], foreach: { from: "list.output.targets", max_items: 50 } },
    { id: "announce", title: "Announce", needs: ["publish"] },
  ],
};

interface Run {
  id: string;
  nodes: { key: string; task_id: string | null }[];
}

async function timed(server: ServerProcess, count: number, operation: (index: number) => Promise<void>): Promise<RunResult> {
  const latencies: number[] = [];
  const cpuBefore = server.cpuMs();
  const started = performance.now();
  for (let index = 0; index < count; index += 1) {
    const begun = performance.now();
    await operation(index);
    latencies.push(performance.now() - begun);
  }
  return { latencies, wallMs: performance.now() - started, serverCpuMs: server.cpuMs() - cpuBefore };
}

const taskOf = (run: Run, key: string): string => run.nodes.find((node) => node.key === key)?.task_id as string;

export async function runBlueprintBench(options: BlueprintBenchOptions): Promise<Section> {
  return withServer(newDataDir(), 4, async (server) => {
    await server.waitForHealth();
    const agent: Credentials = await server.client.registerAgent("bench-planner");
    const start = async (name: string, params: Record<string, unknown>): Promise<Run> =>
      JSON.parse(expectStatus(`instantiate ${name}`, await server.client.post(`/blueprints/${name}/instantiate`, { project: null, params }, agent), 201).body) as Run;
    for (const document of [hundredNodes(), contract, fan]) expectStatus("save", await server.client.post("/blueprints", document, agent), 201);

    progress(`blueprints: ${options.instantiations} instantiations of a 100-node plan`);
    const instantiate = await timed(server, options.instantiations, async (index) => {
      await start("hundred", { release: `r${index}` });
    });

    progress(`blueprints: ${options.completions} completions checked against a schema and a memory check`);
    const runs: Run[] = [];
    for (let index = 0; index < options.completions; index += 1) {
      const run = await start("contract", {});
      expectStatus("claim", await server.client.post(`/tasks/${taskOf(run, "write")}/claim`, {}, agent), 200);
      runs.push(run);
    }
    expectStatus("note", await server.client.post("/memory", { content: "The notes are written", tags: ["bench-notes"], project: null }, agent), 201);
    const output = { url: "https://example.com/notes", pages: 4, sections: ["intro", "body", "end"] };
    const complete = await timed(server, options.completions, async (index) => {
      expectStatus("complete", await server.client.post(`/tasks/${taskOf(runs[index] as Run, "write")}/complete`, { output }, agent), 200);
    });

    progress(`blueprints: ${options.fanOuts} fan-outs of 50 items`);
    const sources: Run[] = [];
    for (let index = 0; index < options.fanOuts; index += 1) {
      const run = await start("fan", {});
      expectStatus("claim", await server.client.post(`/tasks/${taskOf(run, "list")}/claim`, {}, agent), 200);
      sources.push(run);
    }
    const targets = Array.from({ length: 50 }, (_, index) => `target-${index}`);
    const fanOut = await timed(server, options.fanOuts, async (index) => {
      expectStatus("complete", await server.client.post(`/tasks/${taskOf(sources[index] as Run, "list")}/complete`, { output: { targets } }, agent), 200);
    });
    const expanded = JSON.parse((await server.client.get(`/blueprints/runs/${(sources[0] as Run).id}`, agent)).body) as Run;

    const rss = server.memory().rssMb;
    return {
      name: "blueprints",
      title: "Blueprint runs: instantiate, checked completion, fan-out",
      rows: [
        rowOf("instantiate a 100-node plan (100 tasks, 180 dependencies)", instantiate, null),
        rowOf("complete a run task: output schema + memory check", complete, null),
        rowOf("complete a fan-out source: 50 tasks + fan-in rewired", fanOut, rss, `${expanded.nodes.length} nodes after expansion`),
      ],
      targets: [],
      details: { instantiations: options.instantiations, completions: options.completions, fanOuts: options.fanOuts },
    };
  });
}
