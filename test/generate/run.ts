import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gitleaksRulesSource, GITLEAKS_RULES_PATH } from "./gitleaks.js";
import { hostDocs, HOSTS_DOC_PATH } from "./hosts.js";
import { README_PATH, withRouteTable } from "./readme.js";
import { routesSource, ROUTES_PATH } from "./routes.js";

// `npm run generate`: writes the files made from code — the README's route table, docs/hosts.md,
// the gitleaks rules in TypeScript and the clients' route table (src/client/routes.ts). A unit test
// beside each fails when the committed copy drifts.

const readme = withRouteTable(readFileSync(README_PATH, "utf8"));
if (readme === undefined) throw new Error("README.md has lost its <!-- routes:start --> / <!-- routes:end --> markers");
for (const [path, content] of [
  [README_PATH, readme],
  [HOSTS_DOC_PATH, hostDocs()],
  [GITLEAKS_RULES_PATH, gitleaksRulesSource()],
  [ROUTES_PATH, routesSource()],
] as const) {
  const before = existsSync(path) ? readFileSync(path, "utf8") : "";
  if (before === content) continue;
  writeFileSync(path, content);
  process.stdout.write(`wrote ${fileURLToPath(path)}\n`);
}
