import { homedir, hostname } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, isLoopbackHost, loadConfig } from "../../src/core/config.js";

/** The ConfigError `loadConfig(env)` throws, so its message can be checked. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe("loadConfig defaults (CONTRACT §1.1)", () => {
  const config = loadConfig({});

  it("binds loopback on port 8470", () => {
    expect(config.HOST).toBe("127.0.0.1");
    expect(config.PORT).toBe(8470);
    expect(config.hostIsLoopback).toBe(true);
  });

  it("keeps data in ~/.cairn and derives PUBLIC_URL from HOST and PORT", () => {
    expect(config.DATA_DIR).toBe(join(homedir(), ".cairn"));
    expect(config.PUBLIC_URL).toBe("http://127.0.0.1:8470");
    expect(config.publicUrlExplicit).toBe(false);
  });

  it("has the documented identities and registration defaults", () => {
    expect(config.AGENT_KEYS).toEqual([]);
    expect(config.REGISTRATION_KEY).toBe("");
    expect(config.UI_AGENT_ID).toBe("human");
    expect(config.UI_PASSWORD).toBe("");
    expect(config.ARCHIVIST_AGENT_ID).toBe("archivist");
    expect(config.ARCHIVIST).toBe("on");
    expect(config.DIRECTIVE_WRITERS).toEqual(["human"]);
  });

  it("has the documented thresholds and limits", () => {
    expect(config).toMatchObject({
      DIRECTIVE_CONFLICT_THRESHOLD: 0.85,
      DIRECTIVE_STALENESS_AGENT_DAYS: 30,
      DIRECTIVE_STALENESS_AGE_DAYS: 90,
      DIRECTIVE_STALENESS_COOLDOWN_HOURS: 168,
      EMBEDDING_MODEL: "use-lite",
      DUPLICATE_THRESHOLD: 0.95,
      SIMILAR_THRESHOLD: 0.75,
      MAX_CONTENT_BYTES: 65536,
      MAX_BODY_BYTES: 1048576,
      TASK_LEASE_SECONDS: 7200,
      EVENT_RETENTION_DAYS: 30,
      AUDIT_LOG: "on",
      AUDIT_COMMIT_SECONDS: 300,
      RATE_LIMIT_PER_MINUTE: 600,
      LOG_LEVEL: "info",
      CAIRN_URL: "http://127.0.0.1:8470",
      ARCHIVIST_LLM_PROVIDER: "none",
      SYNTHESIS_INTERVAL_SECONDS: 3600,
      CONFLICT_THRESHOLD: 0.92,
      DECAY_RATE: 0.9,
      DECAY_FLOOR: 0.05,
      DECAY_WINDOW_DAYS: 7,
      PROMOTION_MIN_CONFIDENCE: 0.6,
      PROMOTION_MIN_READERS: 2,
      PROMOTION_MIN_REINFORCEMENTS: 3,
      PROMOTION_STABLE_DAYS: 7,
      ARCHIVIST_TOKEN_BUDGET_PER_HOUR: 200000,
      MCP_TOOLSET: "standard",
      FEEDS_ALLOW_PRIVATE: false,
      MESH_ALLOW_PRIVATE: true,
      OUTBOUND_ALLOWLIST: [],
    });
    expect(config.EMBEDDING_MODEL_DIR).toBeUndefined();
    expect(config.CAIRN_AGENT_ID).toBeUndefined();
    expect(config.CAIRN_API_KEY).toBeUndefined();
  });

  it("treats an empty variable as unset and ignores unknown settings", () => {
    const parsed = loadConfig({ PORT: "", HOST: "  ", NOT_A_SETTING: "whatever" });
    expect(parsed.PORT).toBe(8470);
    expect(parsed.HOST).toBe("127.0.0.1");
    expect(parsed).not.toHaveProperty("NOT_A_SETTING");
  });
});

describe("loadConfig values", () => {
  it("parses numbers and enums from strings", () => {
    const config = loadConfig({ PORT: "0", DUPLICATE_THRESHOLD: "0.9", EMBEDDING_MODEL: "hash", ARCHIVIST: "off", LOG_LEVEL: "debug" });
    expect(config.PORT).toBe(0);
    expect(config.DUPLICATE_THRESHOLD).toBe(0.9);
    expect(config.EMBEDDING_MODEL).toBe("hash");
    expect(config.ARCHIVIST).toBe("off");
    expect(config.LOG_LEVEL).toBe("debug");
  });

  it("resolves DATA_DIR and expands ~", () => {
    expect(loadConfig({ DATA_DIR: "relative/dir" }).DATA_DIR).toBe(resolve("relative/dir"));
    expect(loadConfig({ DATA_DIR: "~/elsewhere" }).DATA_DIR).toBe(join(homedir(), "elsewhere"));
  });

  it("derives PUBLIC_URL from HOST and PORT, bracketing IPv6, unless it is set", () => {
    // A bind to every interface names no machine: the derived URL names this one (CONTRACT §10a).
    expect(loadConfig({ HOST: "0.0.0.0", PORT: "9000" }).PUBLIC_URL).toBe(`http://${hostname().toLowerCase()}:9000`);
    expect(loadConfig({ HOST: "::", PORT: "9000" }).PUBLIC_URL).toBe(`http://${hostname().toLowerCase()}:9000`);
    expect(loadConfig({ HOST: "::1", PORT: "9000" }).PUBLIC_URL).toBe("http://[::1]:9000");
    const explicit = loadConfig({ PUBLIC_URL: "https://cairn.example.com/" });
    expect(explicit.PUBLIC_URL).toBe("https://cairn.example.com");
    expect(explicit.publicUrlExplicit).toBe(true);
  });

  it("defaults DIRECTIVE_WRITERS to UI_AGENT_ID", () => {
    expect(loadConfig({ UI_AGENT_ID: "alice" }).DIRECTIVE_WRITERS).toEqual(["alice"]);
    expect(loadConfig({ UI_AGENT_ID: "alice", DIRECTIVE_WRITERS: "bob, carol" }).DIRECTIVE_WRITERS).toEqual(["bob", "carol"]);
  });

  it("requires EMBEDDING_MODEL_DIR for the custom model", () => {
    expect(configError({ EMBEDDING_MODEL: "custom" }).message).toContain("EMBEDDING_MODEL_DIR");
    expect(loadConfig({ EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: "/models/x" }).EMBEDDING_MODEL_DIR).toBe("/models/x");
  });
});

describe("AGENT_KEYS", () => {
  it("parses id:key[:role] items, role defaulting to agent", () => {
    const config = loadConfig({ AGENT_KEYS: "ci:0123456789abcdef, boss:fedcba9876543210:owner,ro:ro-key-ro-key-ro-key:viewer" });
    expect(config.AGENT_KEYS).toEqual([
      { agentId: "ci", key: "0123456789abcdef", role: "agent" },
      { agentId: "boss", key: "fedcba9876543210", role: "owner" },
      { agentId: "ro", key: "ro-key-ro-key-ro-key", role: "viewer" },
    ]);
  });

  it.each([
    ["a key shorter than 16 characters", "ci:short"],
    ["a missing key", "ci"],
    ["an empty key", "ci::agent"],
    ["an unknown role", "ci:0123456789abcdef:admin"],
    ["an invalid id", "CI:0123456789abcdef"],
    ["too many parts", "ci:0123456789abcdef:agent:extra"],
    ["a duplicate id", "ci:0123456789abcdef,ci:fedcba9876543210"],
  ])("rejects %s", (_label, value) => {
    expect(configError({ AGENT_KEYS: value }).message).toContain("AGENT_KEYS");
  });

  it("accepts a key of exactly 16 characters", () => {
    expect(loadConfig({ AGENT_KEYS: "ci:0123456789abcdef" }).AGENT_KEYS).toHaveLength(1);
  });
});

describe("invalid settings throw a ConfigError naming the setting", () => {
  it.each([
    ["PORT", "99999"],
    ["PORT", "-1"],
    ["PORT", "eighty"],
    ["PORT", "80.5"],
    ["EMBEDDING_MODEL", "nope"],
    ["DUPLICATE_THRESHOLD", "2"],
    ["SIMILAR_THRESHOLD", "-0.1"],
    ["LOG_LEVEL", "verbose"],
    ["ARCHIVIST", "maybe"],
    ["AUDIT_LOG", "yes"],
    ["MCP_TOOLSET", "everything"],
    ["UI_AGENT_ID", "Human"],
    ["ARCHIVIST_AGENT_ID", "has space"],
    ["DIRECTIVE_WRITERS", "ok,NOT-OK"],
    ["PUBLIC_URL", "not a url"],
    ["PUBLIC_URL", "ftp://example.com"],
    ["CAIRN_URL", "nowhere"],
    ["RATE_LIMIT_PER_MINUTE", "-5"],
    ["MAX_BODY_BYTES", "10"],
    ["ARCHIVIST_LLM_PROVIDER", "llama"],
    ["FEEDS_ALLOW_PRIVATE", "yes"],
    ["MESH_ALLOW_PRIVATE", "1"],
    ["OUTBOUND_ALLOWLIST", "http://feeds.lan"],
    ["OUTBOUND_ALLOWLIST", "feeds.lan:8080"],
    ["OUTBOUND_ALLOWLIST", "10.0.0.0/33"],
    ["OUTBOUND_ALLOWLIST", "fd00::/129"],
    ["OUTBOUND_ALLOWLIST", "feeds.lan/24"],
    ["OUTBOUND_ALLOWLIST", "127.1"],
    ["OUTBOUND_ALLOWLIST", "0x7f000001"],
    ["OUTBOUND_ALLOWLIST", "10.0.0.0/8/8"],
  ])("%s=%s", (setting, value) => {
    const error = configError({ [setting]: value });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(setting);
  });

  it("MAX_CONTENT_BYTES above MAX_BODY_BYTES", () => {
    expect(configError({ MAX_CONTENT_BYTES: "4096", MAX_BODY_BYTES: "2048" }).message).toContain("MAX_CONTENT_BYTES");
  });

  it("the same id for the UI and the archivist", () => {
    expect(configError({ UI_AGENT_ID: "same", ARCHIVIST_AGENT_ID: "same" }).message).toContain("ARCHIVIST_AGENT_ID");
  });

  it("the archivist among the directive writers, under its default or a configured id", () => {
    expect(configError({ DIRECTIVE_WRITERS: "human,archivist" }).message).toContain("DIRECTIVE_WRITERS");
    expect(configError({ DIRECTIVE_WRITERS: "human,curator", ARCHIVIST_AGENT_ID: "curator" }).message).toContain("DIRECTIVE_WRITERS");
    expect(loadConfig({ DIRECTIVE_WRITERS: "human,archivist", ARCHIVIST_AGENT_ID: "curator" }).DIRECTIVE_WRITERS).toEqual([
      "human",
      "archivist",
    ]);
  });

  it("never echoes a secret from AGENT_KEYS", () => {
    const error = configError({ AGENT_KEYS: "ci:supersecretvalue-123:admin" });
    expect(error.message).not.toContain("supersecretvalue-123");
  });
});

describe("the outbound settings (CONTRACT §11)", () => {
  it("read true and false", () => {
    expect(loadConfig({ FEEDS_ALLOW_PRIVATE: "true", MESH_ALLOW_PRIVATE: "false" })).toMatchObject({ FEEDS_ALLOW_PRIVATE: true, MESH_ALLOW_PRIVATE: false });
  });

  it("read OUTBOUND_ALLOWLIST as host names, addresses and CIDR ranges, lower-cased, without brackets or trailing dots", () => {
    const parsed = loadConfig({ OUTBOUND_ALLOWLIST: " Feeds.LAN. , 10.1.0.0/16,127.0.0.1, [::1], fd00::/8 ,," });
    expect(parsed.OUTBOUND_ALLOWLIST).toEqual(["feeds.lan", "10.1.0.0/16", "127.0.0.1", "::1", "fd00::/8"]);
  });
});

describe("loopback detection", () => {
  it.each(["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]"])("%s is loopback", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
    expect(loadConfig({ HOST: host }).hostIsLoopback).toBe(true);
  });

  it.each(["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "example.com", "128.0.0.1", "localhost.example.com"])(
    "%s is not loopback",
    (host) => {
      expect(isLoopbackHost(host)).toBe(false);
      expect(loadConfig({ HOST: host }).hostIsLoopback).toBe(false);
    },
  );
});
