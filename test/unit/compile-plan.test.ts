import { describe, expect, it } from "vitest";
import { ENVELOPE_BYTES, jsonBytes, keyOf, MAX_UNITS_PER_SEND, halves, OversizedFileError, planSend, type Limits, type UnitStatus } from "../../src/cli/compile/plan.js";
import type { Unit } from "../../src/cli/compile/units.js";

// CONTRACT §18: what `cairn compile` sends, given the server's statuses and anchors.

const unit = (path: string, symbol: string): Unit => ({
  path,
  symbol,
  kind: symbol === "" ? "module" : "function",
  lang: "typescript",
  start_line: 1,
  end_line: 1,
  sha: "0".repeat(64),
  description: `${path} ${symbol}`,
  deps: [],
});

const roomy: Limits = { units: MAX_UNITS_PER_SEND, bytes: 1024 * 1024 };

const statusesOf = (entries: [Unit, UnitStatus][]): Map<string, UnitStatus> => new Map(entries.map(([item, status]) => [keyOf(item), status]));
const sent = (plan: ReturnType<typeof planSend>): string[] => plan.batches.flatMap((batch) => batch.units.map((item) => `${item.path}:${item.symbol}`));

describe("planning a compile", () => {
  const a = unit("src/a.ts", "");
  const aRun = unit("src/a.ts", "run");
  const aStop = unit("src/a.ts", "stop");
  const b = unit("src/b.ts", "");

  it("sends the units that are not fresh, and a unit the server did not mention", () => {
    const plan = planSend([a, aRun, b], statusesOf([[a, "fresh"], [aRun, "stale"]]), [], "all", roomy);
    expect(sent(plan)).toEqual(["src/a.ts:run", "src/b.ts:"]);
    expect(plan.sending).toEqual({ fresh: 0, stale: 1, unknown: 1 });
    expect(plan.batches.map((batch) => batch.prune_paths)).toEqual([[]]);
  });

  it("sends nothing, in no request, when everything is fresh", () => {
    const plan = planSend([a, b], statusesOf([[a, "fresh"], [b, "fresh"]]), [a, b], "all", roomy);
    expect(plan.batches).toEqual([]);
  });

  it("prunes a file with a gone symbol and sends all its units with the prune, the fresh ones without description or deps", () => {
    const plan = planSend([a, aRun, b], statusesOf([[a, "stale"], [aRun, "fresh"], [b, "fresh"]]), [a, aRun, aStop, b], "all", roomy);
    expect(plan.prunePaths).toEqual(["src/a.ts"]);
    expect(plan.batches).toEqual([{ units: [a, { ...aRun, description: "", deps: [] }], prune_paths: ["src/a.ts"] }]);
    expect(plan.sending).toEqual({ fresh: 1, stale: 1, unknown: 0 });
  });

  it("prunes a deleted file inside the scope, and leaves anchors outside it alone", () => {
    const gone = unit("src/gone.ts", "");
    const elsewhere = unit("lib/old.ts", "");
    const plan = planSend([a], statusesOf([[a, "fresh"]]), [a, gone, elsewhere, unit("src/a.tsx", "")], ["src/a.ts", "src/gone.ts"], roomy);
    expect(plan.prunePaths).toEqual(["src/gone.ts"]);
    expect(plan.batches).toEqual([{ units: [], prune_paths: ["src/gone.ts"] }]);
  });

  it(`packs whole files into requests of at most ${MAX_UNITS_PER_SEND} units`, () => {
    const files = Array.from({ length: 5 }, (_, file) => Array.from({ length: 150 }, (_, index) => unit(`src/f${file}.ts`, `s${index}`)));
    const plan = planSend(files.flat(), new Map(), [], "all", roomy);
    expect(plan.batches.map((batch) => batch.units.length)).toEqual([450, 300]);
    for (const batch of plan.batches) expect(new Set(batch.units.map((item) => item.path)).size).toBe(batch.units.length / 150);
  });

  it("keeps each request within the body limit, splitting a file only when it is not pruned", () => {
    const big = Array.from({ length: 40 }, (_, index) => ({ ...unit("src/big.ts", `s${String(index).padStart(2, "0")}`), description: "x".repeat(900) }));
    const limits: Limits = { units: MAX_UNITS_PER_SEND, bytes: ENVELOPE_BYTES + 10 * jsonBytes(big[0]) };
    const plan = planSend(big, new Map(), [], "all", limits);
    expect(plan.batches.map((batch) => batch.units.length)).toEqual([10, 10, 10, 10]);
    const gone = unit("src/big.ts", "gone");
    expect(() => planSend(big, new Map(), [gone], "all", limits)).toThrow(OversizedFileError);
  });

  it("halves a refused request by files, a pruned file's units still beside its prune, and a lone file by its units", () => {
    const c = unit("src/c.ts", "");
    expect(halves({ units: [a, aRun, b, c], prune_paths: ["src/a.ts", "src/deleted.ts"] })).toEqual([
      { units: [a, aRun, b], prune_paths: ["src/a.ts"] },
      { units: [c], prune_paths: ["src/deleted.ts"] },
    ]);
    expect(halves({ units: [a, aRun, aStop], prune_paths: [] })).toEqual([
      { units: [a, aRun], prune_paths: [] },
      { units: [aStop], prune_paths: [] },
    ]);
    expect(halves({ units: [a, aRun], prune_paths: ["src/a.ts"] })).toBeUndefined();
  });
});
