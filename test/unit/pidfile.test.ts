import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pidFile, readServerRecord, recordFile, removeServerRecord, writeServerRecord } from "../../src/cli/pidfile.js";
import { tempDir } from "../helpers/server.js";

// Issue 25: `server.pid` is a pid file (the number alone); the record beside it is `server.json`.

const record = { pid: 4242, url: "http://127.0.0.1:8470", started_at: "2026-01-02T03:04:05.678Z" };

describe("the running server's files", () => {
  const dirs: string[] = [];
  const dataDir = (): string => {
    const dir = tempDir("cairn-pidfile-");
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("writes the bare pid to server.pid and the record to server.json", () => {
    const dir = dataDir();
    writeServerRecord(dir, record);
    expect(readFileSync(pidFile(dir), "utf8")).toBe("4242\n");
    expect(JSON.parse(readFileSync(recordFile(dir), "utf8"))).toEqual(record);
    expect(readServerRecord(dir)).toEqual(record);
  });

  it("removes both for the server that wrote them, and neither for another pid", () => {
    const dir = dataDir();
    writeServerRecord(dir, record);
    removeServerRecord(dir, 1);
    expect(readServerRecord(dir)).toEqual(record);
    removeServerRecord(dir, record.pid);
    expect(readServerRecord(dir)).toBeNull();
    expect(() => readFileSync(recordFile(dir))).toThrow();
  });

  it("takes the pid file's word over a record of an earlier server", () => {
    const dir = dataDir();
    writeServerRecord(dir, record);
    writeFileSync(pidFile(dir), "5151\n");
    expect(readServerRecord(dir)).toEqual({ pid: 5151, url: "(unknown)", started_at: "(unknown)" });
  });

  it("still reads a pid file that holds the whole record, as earlier versions wrote it", () => {
    const dir = dataDir();
    writeFileSync(join(dir, "server.pid"), `${JSON.stringify(record)}\n`);
    expect(readServerRecord(dir)).toEqual(record);
    removeServerRecord(dir, record.pid);
    expect(readServerRecord(dir)).toBeNull();
  });

  it("reads nothing from a pid file that is neither", () => {
    const dir = dataDir();
    writeFileSync(pidFile(dir), "not a pid\n");
    expect(readServerRecord(dir)).toBeNull();
  });
});
