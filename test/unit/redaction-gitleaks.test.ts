import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { GITLEAKS_RULES } from "../../src/services/captures/redaction/gitleaks/rules.js";
import { adoptedGitleaksRules } from "../../src/services/captures/redaction/gitleaks.js";

// The vendored gitleaks rule list (src/services/captures/redaction/gitleaks/README.md): the TOML is
// kept as published, and rules.ts is its data in TypeScript, generated here so the two never drift.

const dir = new URL("../../src/services/captures/redaction/gitleaks/", import.meta.url);

interface TomlAllowlist {
  regexTarget?: string;
  condition?: string;
  regexes?: string[];
  stopwords?: string[];
  paths?: string[];
  commits?: string[];
}

interface TomlRule {
  id: string;
  regex?: string;
  secretGroup?: number;
  entropy?: number;
  keywords?: string[];
  path?: string;
  allowlists?: TomlAllowlist[];
}

interface TomlConfig {
  minVersion: string;
  allowlist: { regexes: string[]; stopwords: string[] };
  rules: TomlRule[];
}

/**
 * The fields redaction uses, in a stable order; path and commit allowlists become a flag (a capture
 * has neither). The licence travels with the data: the build ships rules.js, not the TOML beside it.
 */
function render(toml: string, licence: string): string {
  const config = parse(toml) as unknown as TomlConfig;
  const rules = config.rules.map((rule) => ({
    id: rule.id,
    ...(rule.regex === undefined ? {} : { regex: rule.regex }),
    ...(rule.secretGroup === undefined ? {} : { secretGroup: rule.secretGroup }),
    ...(rule.entropy === undefined ? {} : { entropy: rule.entropy }),
    keywords: rule.keywords ?? [],
    ...(rule.path === undefined ? {} : { path: rule.path }),
    allowlists: (rule.allowlists ?? []).map((list) => ({
      ...(list.regexTarget === undefined ? {} : { regexTarget: list.regexTarget }),
      ...(list.condition === undefined ? {} : { condition: list.condition }),
      regexes: list.regexes ?? [],
      stopwords: list.stopwords ?? [],
      ...(list.paths === undefined && list.commits === undefined ? {} : { scoped: true }),
    })),
  }));
  return [
    "// Generated from gitleaks.toml by test/unit/redaction-gitleaks.test.ts (UPDATE_GITLEAKS_RULES=1): do not edit.",
    "// The data is gitleaks' (see README.md beside this file), under its licence:",
    ...licence.trim().split("\n").map((line) => `//${line === "" ? "" : ` ${line}`}`),
    'import type { GitleaksConfig } from "./types.js";',
    "",
    "export const GITLEAKS: GitleaksConfig = {",
    `  minVersion: ${JSON.stringify(config.minVersion)},`,
    `  allowlist: ${JSON.stringify({ regexes: config.allowlist.regexes, stopwords: config.allowlist.stopwords })},`,
    "  rules: [",
    ...rules.map((rule) => `    ${JSON.stringify(rule)},`),
    "  ],",
    "};",
    "",
    "export const GITLEAKS_RULES = GITLEAKS.rules;",
    "",
  ].join("\n");
}

describe("the vendored gitleaks rules", () => {
  it("match gitleaks.toml (regenerate with UPDATE_GITLEAKS_RULES=1)", () => {
    const expected = render(readFileSync(new URL("gitleaks.toml", dir), "utf8"), readFileSync(new URL("LICENSE", dir), "utf8"));
    const path = new URL("rules.ts", dir);
    if (process.env.UPDATE_GITLEAKS_RULES === "1") writeFileSync(path, expected);
    expect(readFileSync(path, "utf8")).toBe(expected);
  });

  it("are adopted but for the assignment-context family, path-scoped rules and the ones redaction does itself", () => {
    const adopted = adoptedGitleaksRules();
    expect(GITLEAKS_RULES).toHaveLength(222);
    expect(adopted.length).toBeGreaterThanOrEqual(110);
    const ids = new Set(adopted.map((rule) => rule.id));
    for (const id of ["slack-bot-token", "stripe-access-token", "gcp-api-key", "gitlab-pat", "npm-access-token", "huggingface-access-token", "vault-service-token", "sentry-user-token"]) {
      expect(ids.has(id), id).toBe(true);
    }
    for (const id of ["generic-api-key", "private-key", "curl-auth-user", "kubernetes-secret-yaml", "pkcs12-file"]) expect(ids.has(id), id).toBe(false);
  });
});
