import { readFileSync } from "node:fs";
import { parse } from "smol-toml";

// The vendored gitleaks rule list (src/services/redaction/gitleaks/README.md): the TOML is
// kept as published, and rules.ts is its data in TypeScript. `npm run generate` writes rules.ts;
// test/unit/redaction-gitleaks.test.ts fails when it drifts from the TOML.

const dir = new URL("../../src/services/redaction/gitleaks/", import.meta.url);
export const GITLEAKS_RULES_PATH = new URL("rules.ts", dir);

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
    "// Generated from gitleaks.toml by test/generate/gitleaks.ts (`npm run generate`): do not edit.",
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

/** rules.ts as the TOML and the licence beside it make it. */
export const gitleaksRulesSource = (): string => render(readFileSync(new URL("gitleaks.toml", dir), "utf8"), readFileSync(new URL("LICENSE", dir), "utf8"));
