import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "../../src/openapi/build.js";
import { catalogue } from "../../tools/catalogue.js";
import { SERVER_EVENT_PAYLOAD_FIELDS, SERVER_EVENT_TYPES } from "../../src/wire/events.js";

const ROOT = resolve(import.meta.dirname, "../..");

// That the list names exactly the types the services emit is the compiler's to say: `bus.emit`
// takes only the `ServerEvent` union, and the payload descriptions are a record keyed by its types.
describe("the event type list", () => {
  it("is the keys of the typed payload descriptions, in their order, each once", () => {
    expect(SERVER_EVENT_TYPES).toEqual(Object.keys(SERVER_EVENT_PAYLOAD_FIELDS));
    expect(new Set(SERVER_EVENT_TYPES).size).toBe(SERVER_EVENT_TYPES.length);
  });

  it("is documented in docs/events.md and in the OpenAPI document", () => {
    const docs = readFileSync(join(ROOT, "docs", "events.md"), "utf8");
    const openapi = JSON.stringify(buildOpenApi(catalogue, { version: "test", serverUrl: "http://127.0.0.1" }));
    for (const type of SERVER_EVENT_TYPES) {
      expect(docs, type).toContain(`\`${type}\``);
      expect(openapi, type).toContain(`\`${type}\``);
    }
  });
});
