import { spawn } from "node:child_process";
import { constants, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { applyConfigMerge } from "../../plugin/config-merge/apply.js";
import { mergeJsonEntry, type JsonDialect } from "../../plugin/config-merge/json-entry.js";
import { configMergeProgram } from "../../plugin/config-merge/program.js";
import { mergeTomlTable } from "../../plugin/config-merge/toml-table.js";

const entry = { command: "/usr/local/bin/cairn", args: ["mcp"], env: { CAIRN_URL: "http://127.0.0.1:8470", CAIRN_AGENT_ID: "builder" } };
const plain: JsonDialect = { comments: false, trailingCommas: false };
const jsonc: JsonDialect = { comments: true, trailingCommas: true };

/** What a JSONC reader makes of a text: JavaScript reads comments and trailing commas the same way. */
const readJsonc = (text: string): unknown => JSON.parse(JSON.stringify(runInNewContext(`(${text})`)));

function merged(text: string, dialect = plain, container = "mcpServers"): string {
  const outcome = mergeJsonEntry(text, container, "cairn", entry, dialect);
  if (!("text" in outcome)) throw new Error(`refused: ${outcome.refused}`);
  return outcome.text;
}

describe("merging Cairn's entry into a JSON configuration", () => {
  it("adds the entry beside the other servers, in the file's indentation, and leaves every other byte", () => {
    const text = '{\n    "mcpServers": {\n        "other": {"command": "x", "n": 1.0}\n    },\n    "z": [1,2]\n}\n';
    const result = merged(text);
    expect(JSON.parse(result)).toEqual({ mcpServers: { other: { command: "x", n: 1 }, cairn: entry }, z: [1, 2] });
    expect(result).toContain('"other": {"command": "x", "n": 1.0},\n        "cairn": {\n            "command"');
    expect(result.endsWith('    },\n    "z": [1,2]\n}\n')).toBe(true);
  });

  it("adds the container when the file has none, and into an empty one", () => {
    expect(JSON.parse(merged('{"theme": "dark"}'))).toEqual({ theme: "dark", mcpServers: { cairn: entry } });
    expect(JSON.parse(merged('{\n  "mcpServers": {}\n}\n'))).toEqual({ mcpServers: { cairn: entry } });
    expect(JSON.parse(merged("{}"))).toEqual({ mcpServers: { cairn: entry } });
  });

  it("replaces an older cairn entry and nothing else, and a second merge changes nothing", () => {
    const text = '{\n  "mcpServers": {\n    "cairn": {"command": "old"},\n    "other": {"command": "x"}\n  }\n}\n';
    const once = merged(text);
    expect(JSON.parse(once)).toEqual({ mcpServers: { cairn: entry, other: { command: "x" } } });
    expect(merged(once)).toBe(once);
    for (const start of ['{"mcpServers": {"a": {}}}', "{}", '{\r\n\t"mcpServers": {\r\n\t\t"a": {}\r\n\t}\r\n}\r\n']) expect(merged(merged(start))).toBe(merged(start));
  });

  it("keeps a file's CRLF line ends and tab indentation", () => {
    const result = merged('{\r\n\t"mcpServers": {\r\n\t\t"a": {}\r\n\t}\r\n}\r\n');
    expect(result.replace(/\r\n/g, "")).not.toContain("\n");
    expect(result).toContain('\t\t"cairn": {\r\n\t\t\t"command"');
  });

  it("keeps comments and trailing commas where the host reads JSONC, and its members' trailing-comma habit", () => {
    const text = '{\n  // servers for this project\n  "servers": {\n    "other": { "command": "x" }, // ours\n  },\n  /* kept */ "z": 1,\n}\n';
    const result = merged(text, jsonc, "servers");
    expect(readJsonc(result)).toEqual({ servers: { other: { command: "x" }, cairn: entry }, z: 1 });
    expect(result).toContain("// servers for this project");
    expect(result).toContain('"other": { "command": "x" }, // ours\n    "cairn": {');
    expect(result).toMatch(/\n {4}},\n {2}},\n {2}\/\* kept \*\/ "z": 1,\n}\n$/);
    expect(merged(result, jsonc, "servers")).toBe(result);
  });

  it("refuses what the host would not read, and files it cannot add to without changing something else", () => {
    const refusals: [string, JsonDialect, RegExp][] = [
      ['{\n  // a comment\n  "mcpServers": {}\n}', plain, /not valid JSON \(line 2, column 3: a comment/],
      ['{"mcpServers": {"a": 1,}}', { comments: true, trailingCommas: false }, /a comma before '}'/],
      ['{"mcpServers": {"a": 1}', plain, /not valid JSON/],
      ['{"mcpServers": {"a": 01}}', plain, /not valid JSON/],
      ['{"a": "tab\there"}', plain, /an invalid string/],
      ['{"a": 1} {"b": 2}', plain, /more text after the end/],
      ["[1, 2]", plain, /not hold a JSON object/],
      ['{"mcpServers": []}', plain, /"mcpServers" that is not an object/],
      ['{"mcpServers": {}, "mcpServers": {}}', plain, /"mcpServers" twice/],
      ['{"mcpServers": {"cairn": {}, "cairn": {}}}', plain, /"cairn" twice/],
    ];
    for (const [text, dialect, reason] of refusals) {
      const outcome = mergeJsonEntry(text, "mcpServers", "cairn", entry, dialect);
      expect("refused" in outcome ? outcome.refused : "merged", text).toMatch(reason);
    }
  });

  it("accepts and refuses plain JSON as JSON.parse does", () => {
    const samples = ['{"a": [1, -2.5e+3, true, false, null, "\\u00e9\\n"]}', '{"a":{}}', '{"a": 1e}', '{"a": .5}', "{'a': 1}", '{"a": tru}', '{"a": "\\x41"}', "\uFEFF{}"];
    for (const text of samples) {
      let strict = true;
      try {
        JSON.parse(text.replace(/^\uFEFF/, ""));
      } catch {
        strict = false;
      }
      expect("text" in mergeJsonEntry(text, "mcpServers", "cairn", entry, plain), text).toBe(strict);
    }
  });
});

describe("merging Cairn's table into a TOML configuration", () => {
  const table = '[mcp_servers.cairn]\ncommand = "/usr/local/bin/cairn"\nargs = ["mcp"]\nenv = { CAIRN_URL = "http://127.0.0.1:8470", CAIRN_AGENT_ID = "builder" }\n';
  const cairn = { command: "/usr/local/bin/cairn", args: ["mcp"], env: { CAIRN_URL: "http://127.0.0.1:8470", CAIRN_AGENT_ID: "builder" } };
  const mergedToml = (text: string): string => {
    const outcome = mergeTomlTable(text, table);
    if (!("text" in outcome)) throw new Error(`refused: ${outcome.refused}`);
    return outcome.text;
  };

  it("appends the table after everything else, which stays as it was, and a second merge changes nothing", () => {
    const text = 'model = "o3" # the model\n\n[mcp_servers.other]\ncommand = "npx"\nargs = [\n  "a", # first\n  "b",\n]\n';
    const result = mergedToml(text);
    expect(result).toBe(`${text}\n${table}`);
    expect(parseToml(result)).toEqual({ model: "o3", mcp_servers: { other: { command: "npx", args: ["a", "b"] }, cairn } });
    expect(mergedToml(result)).toBe(result);
    expect(mergedToml("")).toBe(table);
    expect(mergedToml('model = "o3"')).toBe(`model = "o3"\n\n${table}`);
  });

  it("replaces Cairn's table and its sub-tables where they are, keeping the comments that follow them", () => {
    const text = '[mcp_servers.cairn]\ncommand = "old"\n# about other\n\n[mcp_servers.other]\ncommand = "x"\n[mcp_servers.cairn.env]\nA = "b"\n';
    const result = mergedToml(text);
    expect(result).toBe(`${table}# about other\n\n[mcp_servers.other]\ncommand = "x"\n`);
    expect(mergedToml(result)).toBe(result);
  });

  it("keeps CRLF line ends and reads every kind of TOML value", () => {
    const text = "a = 1\r\n[x]\r\nd = 1979-05-27 07:32:00Z\r\nt = 07:32:00\r\nf = -1.5e3\r\nh = 0xDEAD_beef\r\ni = inf\r\nl = 'C:\\x'\r\nm = '''\r\nraw\r\n'''\r\nb = \"\"\"multi\\\r\n  line\"\"\"\r\nn = { a = [1, [2, 3]], b.c = true }\r\n";
    const result = mergedToml(text);
    expect(result.replace(/\r\n/g, "")).not.toContain("\n");
    expect(result.startsWith(text)).toBe(true);
    expect((parseToml(result) as { mcp_servers: unknown }).mcp_servers).toEqual({ cairn });
  });

  it("refuses a file that is not TOML, or that defines the table in a way a header cannot join", () => {
    const refusals: [string, RegExp][] = [
      ['[mcp_servers.other\ncommand = "x"\n', /not valid TOML \(line 1, column 19: expected '\]'\)/],
      ["[a]\nx = 1\n[a]\ny = 2\n", /\[a\] defined twice/],
      ["a = 1\na = 2\n", /a defined twice/],
      ["a = hello\n", /"hello", which is not a TOML value/],
      ['a = "unclosed\n', /an unclosed string/],
      ["a = 1 b = 2\n", /more on the line/],
      ['[mcp_servers]\ncairn.command = "x"\n', /sets mcp_servers\.cairn\.command outside a \[mcp_servers\.cairn\] table/],
      ['mcp_servers = { other = { command = "x" } }\n', /defines mcp_servers as a value/],
      ["[[mcp_servers]]\nx = 1\n", /\[\[mcp_servers\]\] as an array of tables/],
      ["[[mcp_servers.cairn]]\nx = 1\n", /\[\[mcp_servers\.cairn\]\] as an array of tables/],
    ];
    for (const [text, reason] of refusals) {
      const outcome = mergeTomlTable(text, table);
      expect("refused" in outcome ? outcome.refused : "merged", text).toMatch(reason);
    }
  });
});

describe("the merge program the onboarding script carries", () => {
  /** Runs the program as the script does, `node - PATH SYNTAX FRESH LABEL` with the program on standard input. */
  const runProgram = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["-", ...args], { stdio: ["pipe", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir() } });
      const output = { stdout: "", stderr: "" };
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
      child.once("error", reject);
      child.once("close", (code) => resolve({ code, ...output }));
      child.stdin.end(configMergeProgram());
    });

  it("runs alone under node: a backup identical to the original beside the file, then nothing on a second run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-merge-"));
    try {
      const path = join(dir, ".mcp.json");
      const original = '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n';
      writeFileSync(path, original);
      const fresh = `${JSON.stringify({ mcpServers: { cairn: entry } }, null, 2)}\n`;
      const first = await runProgram([path, "json", fresh, "claude-code as builder"]);
      expect(first).toMatchObject({ code: 0, stderr: "" });
      const backups = readdirSync(dir).filter((name) => name.endsWith(".bak"));
      expect(backups).toHaveLength(1);
      expect(backups[0]).toMatch(/^\.mcp\.json\.cairn-\d{8}T\d{6}Z\.bak$/);
      expect(first.stdout).toContain(`the original is in ${join(dir, backups[0] as string)}`);
      expect(readFileSync(join(dir, backups[0] as string), "utf8")).toBe(original);
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ mcpServers: { other: { command: "x" }, cairn: entry } });

      const after = readFileSync(path, "utf8");
      const second = await runProgram([path, "json", fresh, "claude-code as builder"]);
      expect(second).toMatchObject({ code: 0, stderr: "" });
      expect(second.stdout).toMatch(/already connects claude-code as builder; left as it is/);
      expect(readFileSync(path, "utf8")).toBe(after);
      expect(readdirSync(dir).filter((name) => name.endsWith(".bak"))).toHaveLength(1);

      writeFileSync(path, "{ not json");
      const refused = await runProgram([path, "json", fresh, "claude-code as builder"]);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/\.mcp\.json is not valid JSON \(line 1, column 3: expected a key in quotes\); it is left as it is/);
      expect(readFileSync(path, "utf8")).toBe("{ not json");
      expect(readdirSync(dir).filter((name) => name.endsWith(".bak"))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("never writes over an existing backup: a second change in the same second gets a name of its own", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-merge-"));
    try {
      const path = join(dir, "config.toml");
      const lines: string[] = [];
      const io = { fs: { readFileSync, writeFileSync, copyFileSync, constants }, out: (line: string) => lines.push(line), err: (line: string) => lines.push(line), now: () => new Date("2025-01-02T03:04:05.678Z") };
      const table = (agent: string): string => `[mcp_servers.cairn]\ncommand = "cairn"\nenv = { CAIRN_AGENT_ID = "${agent}" }\n`;
      writeFileSync(path, 'model = "o3"\n');
      expect(applyConfigMerge(io, { mergeJsonEntry, mergeTomlTable }, path, "toml", table("one"), "codex as one")).toBe(0);
      const once = readFileSync(path, "utf8");
      expect(applyConfigMerge(io, { mergeJsonEntry, mergeTomlTable }, path, "toml", table("two"), "codex as two")).toBe(0);
      expect(readFileSync(join(dir, "config.toml.cairn-20250102T030405Z.bak"), "utf8")).toBe('model = "o3"\n');
      expect(readFileSync(join(dir, "config.toml.cairn-20250102T030405Z-2.bak"), "utf8")).toBe(once);
      expect(parseToml(readFileSync(path, "utf8"))).toEqual({ model: "o3", mcp_servers: { cairn: { command: "cairn", env: { CAIRN_AGENT_ID: "two" } } } });
      expect(lines[1]).toMatch(/the original is in .*-2\.bak$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
