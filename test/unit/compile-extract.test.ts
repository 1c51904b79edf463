import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { extractUnits } from "../../src/cli/compile/extract.js";
import { MAX_UNITS_PER_FILE, type Unit } from "../../src/cli/compile/units.js";

// CONTRACT §18: the client-side extraction of compile units. Golden files hold the expected units of
// each fixture; `CAIRN_UPDATE_GOLDEN=1 npx vitest run test/unit/compile-extract.test.ts` rewrites them
// (then read the diff: a golden file that records a bug is worse than none).

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/compile");

interface Fixture {
  lang: string;
  file: string;
  /** A top-level function (or method) whose body holds `SECRET_BODY_LITERAL_<lang>`. */
  edited: string;
  /** A top-level name to rename. */
  renamed: string;
}

const cases: Fixture[] = [
  { lang: "typescript", file: "typescript/store.ts", edited: "loadEntries", renamed: "loadEntries" },
  { lang: "tsx", file: "tsx/Button.tsx", edited: "Button", renamed: "Small" },
  { lang: "javascript", file: "javascript/server.js", edited: "start", renamed: "ticks" },
  { lang: "python", file: "python/store.py", edited: "load_entries", renamed: "load_entries" },
  { lang: "go", file: "go/store.go", edited: "LoadEntries", renamed: "LoadEntries" },
  { lang: "rust", file: "rust/store.rs", edited: "load_entries", renamed: "parse" },
  { lang: "java", file: "java/Store.java", edited: "Store.add", renamed: "Mode" },
];

// Fixtures are stored as `<name>.<ext>.txt` so that tsc and eslint leave them alone; they are
// extracted under their real name.
const source = (file: string): string => readFileSync(join(fixtures, `${file}.txt`), "utf8");
const goldenPath = (file: string): string => join(fixtures, file.replace(/\.[^./]+$/, ".units.json"));
const bySymbol = (units: Unit[]): Map<string, Unit> => new Map(units.map((unit) => [unit.symbol, unit]));

function unitOf(units: Unit[], symbol: string): Unit {
  const unit = units.find((candidate) => candidate.symbol === symbol);
  if (unit === undefined) throw new Error(`no unit ${symbol} in ${units.map((candidate) => candidate.symbol).join(", ")}`);
  return unit;
}

describe.each(cases)("compile units of $lang", ({ lang, file, edited, renamed }) => {
  const secret = `SECRET_BODY_LITERAL_${lang}`;

  it("match the golden file", async () => {
    const units = await extractUnits(file, source(file));
    if (process.env.CAIRN_UPDATE_GOLDEN === "1") writeFileSync(goldenPath(file), `${JSON.stringify(units, null, 2)}\n`);
    expect(units).toEqual(JSON.parse(readFileSync(goldenPath(file), "utf8")));
    expect(units[0]).toMatchObject({ kind: "module", symbol: "", lang });
  });

  it("a body edit changes the symbol's sha and not the module's", async () => {
    const text = source(file);
    expect(text).toContain(secret);
    const before = await extractUnits(file, text);
    const after = await extractUnits(file, text.replace(secret, `${secret}_edited`));
    expect(unitOf(after, edited).sha).not.toBe(unitOf(before, edited).sha);
    expect(unitOf(after, "").sha).toBe(unitOf(before, "").sha);
    // Units that do not hold the edited text keep their sha.
    const changed = after.filter((unit) => bySymbol(before).get(unit.symbol)?.sha !== unit.sha).map((unit) => unit.symbol);
    const owner = edited.split(".")[0] as string;
    expect(changed.every((symbol) => symbol === edited || symbol === owner)).toBe(true);
  });

  it("renaming a top-level symbol changes the module's sha", async () => {
    const text = source(file);
    const before = await extractUnits(file, text);
    const after = await extractUnits(file, text.replace(new RegExp(`\\b${renamed}\\b`, "g"), `${renamed}Renamed`));
    expect(unitOf(after, "").sha).not.toBe(unitOf(before, "").sha);
    expect(after.map((unit) => unit.symbol)).toContain(`${renamed}Renamed`);
  });

  it("sends no source beyond signatures and doc comments", async () => {
    const units = await extractUnits(file, source(file));
    for (const unit of units) {
      expect(unit.description).not.toContain("SECRET");
      expect(unit.signature ?? "").not.toContain("SECRET");
      expect(Buffer.byteLength(unit.description)).toBeLessThanOrEqual(4096);
      expect(unit.signature ?? "").not.toContain("\n");
      expect((unit.signature ?? "").length).toBeLessThanOrEqual(300);
      expect(unit.sha).toMatch(/^[0-9a-f]{64}$/);
      expect(unit.start_line).toBeGreaterThanOrEqual(1);
      expect(unit.end_line).toBeGreaterThanOrEqual(unit.start_line);
    }
    expect(new Set(units.map((unit) => unit.symbol)).size).toBe(units.length);
  });
});

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

describe("compile units of other files", () => {
  it("an unknown extension gives one file unit", async () => {
    const text = "# Title\n\nSome prose.\n";
    expect(await extractUnits("docs/notes.md", text)).toEqual([
      { path: "docs/notes.md", symbol: "", kind: "file", lang: "md", start_line: 1, end_line: 3, sha: sha256(text), description: "md file, 3 lines", deps: [] },
    ]);
    expect(await extractUnits("Makefile", "all:\n\ttrue")).toMatchObject([{ kind: "file", lang: "text", description: "text file, 2 lines" }]);
  });

  it("a file over 1 MiB is one file unit, not parsed", async () => {
    const text = `export const big = "${"x".repeat(1024 * 1024)}";\n`;
    expect(await extractUnits("src/big.ts", text)).toEqual([
      { path: "src/big.ts", symbol: "", kind: "file", lang: "typescript", start_line: 1, end_line: 1, sha: sha256(text), description: "typescript file, 1 lines", deps: [] },
    ]);
  });

  it("caps the units of one file", async () => {
    const text = Array.from({ length: MAX_UNITS_PER_FILE + 100 }, (_, index) => `export function f${index}(): number { return ${index}; }`).join("\n");
    const units = await extractUnits("src/many.ts", text);
    expect(units).toHaveLength(MAX_UNITS_PER_FILE);
    expect(units[0]?.kind).toBe("module");
  });

  it("adding an import changes the module's sha; a comment or a body edit does not", async () => {
    const base = 'import { a } from "./a.js";\nexport function f(): number {\n  return a();\n}\n';
    const [module] = await extractUnits("src/m.ts", base);
    const [withImport] = await extractUnits("src/m.ts", `import { b } from "./b.js";\n${base}`);
    const [withComment] = await extractUnits("src/m.ts", `// a note\n${base.replace("return a();", "return a() + 1;")}`);
    expect(withImport?.sha).not.toBe(module?.sha);
    expect(withComment?.sha).toBe(module?.sha);
  });

  it("names the top-level symbols a symbol uses as deps", async () => {
    const units = await extractUnits("src/d.ts", "const LIMIT = 3;\nfunction helper(): number { return LIMIT; }\nexport function main(): number { return helper() + other(); }\n");
    expect(unitOf(units, "main").deps).toEqual([{ kind: "symbol", name: "helper" }]);
    expect(unitOf(units, "helper").deps).toEqual([{ kind: "symbol", name: "LIMIT" }]);
    expect(unitOf(units, "main").description).toContain("uses: helper, other");
  });
});
