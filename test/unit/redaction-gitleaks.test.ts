import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GITLEAKS_RULES } from "../../src/services/redaction/gitleaks/rules.js";
import { adoptedGitleaksRules } from "../../src/services/redaction/gitleaks.js";
import { gitleaksRulesSource, GITLEAKS_RULES_PATH } from "../generate/gitleaks.js";

// The vendored gitleaks rule list (src/services/redaction/gitleaks/README.md): rules.ts is
// generated from the TOML kept as published, so the two never drift.

describe("the vendored gitleaks rules", () => {
  it("match gitleaks.toml (`npm run generate` writes rules.ts)", () => {
    expect(readFileSync(GITLEAKS_RULES_PATH, "utf8")).toBe(gitleaksRulesSource());
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
