import { Pill } from "../../components/pills.js";
import type { RunStatus } from "../../../../src/wire/blueprint-runs.js";

/** A run's status as a pill: running, completed, failed or cancelled. */
export function RunStatusPill({ status }: { status: RunStatus }) {
  return <Pill tone={`run-${status}`}>{status}</Pill>;
}
