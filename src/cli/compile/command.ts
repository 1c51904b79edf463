import { parseArgs } from "node:util";
import type { Config } from "../../core/config.js";
import { configOrExit } from "../common.js";
import { compileHelp } from "../help.js";
import { clientIdentity } from "../identity.js";
import { OwnerClient, ownerIdentity, type OwnerIdentity } from "../owner-client.js";
import { print, printError, printFlushed, UsageError } from "../output.js";
import { headCommit, repositoryRoot } from "./git.js";
import { installHook } from "./hook.js";
import { keyOf, MAX_UNITS_PER_SEND, planSend, type Limits, type Plan, type UnitStatus } from "./plan.js";
import { selectFiles, type Selection } from "./selection.js";
import type { CompileResult } from "../../wire/compile.js";
import { anchorsInScope, checkUnits, sendBatches } from "./send.js";
import { readUnits, type ReadResult } from "./sources.js";

/**
 * The agent the command acts as: CAIRN_AGENT_ID with its key, or the agent onboarding connected to
 * this directory; failing both, the owner whose key the local server wrote (as `cairn search` does).
 */
function compileIdentity(config: Config): OwnerIdentity {
  const agent = clientIdentity(config);
  if (agent) return agent;
  try {
    return ownerIdentity(config);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new UsageError(`cairn compile needs an agent: CAIRN_AGENT_ID with CAIRN_API_KEY or CAIRN_KEY_FILE, or a directory connected by onboarding (${why})`);
  }
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`;

function skippedNote(read: ReadResult): string {
  const parts = Object.entries(read.skipped).filter(([, count]) => count > 0).map(([reason, count]) => `${count} ${reason}`);
  return parts.length === 0 ? "" : ` (skipped ${parts.join(", ")})`;
}

const seconds = (started: number): string => `${((performance.now() - started) / 1000).toFixed(2)} s`;

/** A dry run's view of the units: each one to be sent on a line, never a line of its source. */
function dryRunLines(plan: Plan, statuses: Map<string, UnitStatus> | null): string[] {
  const lines: string[] = [];
  for (const batch of plan.batches) {
    for (const unit of batch.units) {
      const status = statuses === null ? "unchecked" : (statuses.get(keyOf(unit)) ?? "unknown");
      lines.push(`${status.padEnd(9)} ${unit.kind.padEnd(9)} ${unit.sha.slice(0, 12)}  ${unit.path}${unit.symbol === "" ? "" : `  ${unit.symbol}`}`);
    }
  }
  for (const path of plan.prunePaths) lines.push(`prune     ${path}`);
  return lines;
}

interface Options {
  project: string | undefined;
  json: boolean;
  /** What one request may carry: the client's MAX_BODY_BYTES stands for the server's until it refuses one. */
  limits: Limits;
}

/** `--dry-run`: asks the server what is fresh (reads only) when it can, and prints what would be sent. */
async function dryRun(client: OwnerClient | null, selection: Selection, read: ReadResult, options: Options, started: number): Promise<void> {
  let statuses: Map<string, UnitStatus> | null = null;
  let plan: Plan;
  if (client === null) {
    plan = planSend(read.units, new Map(), [], selection.scope, options.limits);
  } else {
    const anchors = await anchorsInScope(client, options.project, selection.scope);
    statuses = await checkUnits(client, options.project, read.units, options.limits);
    plan = planSend(read.units, statuses, anchors, selection.scope, options.limits);
  }
  const toSend = plan.batches.flatMap((batch) => batch.units);
  if (options.json) {
    await printFlushed(JSON.stringify({ dry_run: true, checked: statuses !== null, files: read.compiled.length, units: read.units.length, skipped: read.skipped, sending: plan.sending, requests: plan.batches.length, prune_paths: plan.prunePaths, units_to_send: toSend }, null, 2));
    return;
  }
  const checked = statuses === null ? "; no server was asked, so every unit is listed" : `: ${plan.sending.unknown} new, ${plan.sending.stale} changed, ${plan.sending.fresh} fresh beside a pruned symbol`;
  const total =
    `dry run: ${plural(read.compiled.length, "file")}, ${plural(read.units.length, "unit")}${skippedNote(read)}; would send ${plural(toSend.length, "unit")} and prune ${plural(plan.prunePaths.length, "path")} in ${plural(plan.batches.length, "request")}${checked}; nothing was written (${seconds(started)})`;
  await printFlushed([...dryRunLines(plan, statuses), total].join("\n"));
}

function summary(read: ReadResult, sent: number, result: CompileResult, commit: string | undefined, started: number): string {
  const project = result.project === null ? "" : `, project ${result.project}`;
  const stale = result.invalidated.length === 0 ? "" : `, ${plural(result.invalidated.length, "entry")} marked stale`;
  const at = commit === undefined ? "" : ` at ${commit.slice(0, 12)}`;
  return `compiled ${plural(read.compiled.length, "file")}, ${plural(read.units.length, "unit")}${skippedNote(read)}: sent ${sent}, created ${result.created}, updated ${result.updated}, unchanged ${result.unchanged}, removed ${result.removed}${stale}${project}${at} in ${seconds(started)}`;
}

/** `cairn compile [paths…] [--all] [--exclude pattern]… [--project p] [--dry-run] [--install-hook] [--json]` (CONTRACT §18). */
export async function compile(args: string[]): Promise<void> {
  const started = performance.now();
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      all: { type: "boolean", default: false },
      project: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      "install-hook": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      exclude: { type: "string", multiple: true, default: [] },
    },
  });
  const cwd = process.cwd();
  const root = await repositoryRoot(cwd);
  if (values["install-hook"]) {
    if (positionals.length > 0 || values.all || values["dry-run"]) throw new UsageError(`--install-hook takes only --project\n\n${compileHelp}`);
    const path = await installHook(root, values.project);
    print(`installed ${path}: after each commit it runs \`cairn compile\` on the commit's files in the background (output in the git directory's cairn-compile.log), and never fails the commit`);
    return;
  }

  const config = configOrExit();
  const options: Options = { project: values.project, json: values.json, limits: { units: MAX_UNITS_PER_SEND, bytes: config.MAX_BODY_BYTES } };
  const selection = await selectFiles(root, cwd, positionals, values.all, values.exclude);

  if (values["dry-run"]) {
    let client: OwnerClient | null = null;
    try {
      client = new OwnerClient(compileIdentity(config));
      await client.request("/health");
    } catch {
      // No identity or no server: the dry run still shows what compile extracts.
      client = null;
    }
    await dryRun(client, selection, await readUnits(root, selection.files, selection.excluded), options, started);
    return;
  }

  const client = new OwnerClient(compileIdentity(config));
  const read = await readUnits(root, selection.files, selection.excluded);
  const commit = await headCommit(root);
  const anchors = await anchorsInScope(client, options.project, selection.scope);
  // On stderr, so --json output stays one document.
  const onWait = (wait: number, reason: string): void => printError(`the server asks to wait ${wait} s (${reason}); waiting`);
  const statuses = await checkUnits(client, options.project, read.units, options.limits, onWait);
  const plan = planSend(read.units, statuses, anchors, selection.scope, options.limits);
  const result = await sendBatches(client, options.project, commit, plan.batches, onWait);
  const sent = plan.batches.reduce((count, batch) => count + batch.units.length, 0);
  if (options.json) {
    const { memory_ids: _ids, ...counts } = result;
    // `anchors` is what the last request left the project with: unknown when nothing was sent.
    await printFlushed(JSON.stringify({ ...counts, anchors: plan.batches.length > 0 ? result.anchors : null, commit: commit ?? null, files: read.compiled.length, units: read.units.length, skipped: read.skipped, sent, requests: plan.batches.length, prune_paths: plan.prunePaths, ms: Math.round(performance.now() - started) }, null, 2));
  } else {
    print(summary(read, sent, result, commit, started));
  }
}
