import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "../../src/openapi/build.js";
import { catalogue } from "../../tools/catalogue.js";
import { SERVER_EVENT_TYPES } from "../../tools/event-types.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FAMILIES = "memory|task|message|project|agent|session|graph|archivist";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** Event types the services emit: the string literals of the server's families in src/services. */
function emittedTypes(): Set<string> {
  const found = new Set<string>();
  for (const file of sourceFiles(join(ROOT, "src", "services"))) {
    for (const match of readFileSync(file, "utf8").matchAll(new RegExp(`"((?:${FAMILIES})\\.[a-z_]+)"`, "g"))) found.add(match[1] as string);
  }
  return found;
}

describe("the event type list", () => {
  const listed = SERVER_EVENT_TYPES.map((entry) => entry.type);

  it("names every type the services emit, and no other", () => {
    expect(new Set(listed)).toEqual(emittedTypes());
    expect(new Set(listed).size).toBe(listed.length);
  });

  it("is documented in docs/events.md and in the OpenAPI document", () => {
    const docs = readFileSync(join(ROOT, "docs", "events.md"), "utf8");
    const openapi = JSON.stringify(buildOpenApi(catalogue, { version: "test", serverUrl: "http://127.0.0.1" }));
    for (const type of listed) {
      expect(docs, type).toContain(`\`${type}\``);
      expect(openapi, type).toContain(`\`${type}\``);
    }
  });
});
