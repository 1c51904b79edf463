import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { JSON_RPC_ERRORS } from "../../src/mcp/protocol-errors.js";

// The codes are written out so that a server's way to listening does not load the SDK's types.
describe("JSON-RPC error codes", () => {
  it("are the SDK's", () => {
    for (const [name, code] of Object.entries(JSON_RPC_ERRORS)) expect([name, code]).toEqual([name, ErrorCode[name as keyof typeof ErrorCode]]);
  });
});
