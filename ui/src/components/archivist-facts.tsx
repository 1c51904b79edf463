import type { ArchivistStatus } from "../../../src/wire/archivist.js";
import { passSummary } from "../archivist-status.js";
import { Time } from "./time.js";

/** The archivist's lease holder, model and last pass as a definition list. */
export function ArchivistFacts({ status }: { status: ArchivistStatus }) {
  const passAt = typeof status.last_pass?.at === "string" ? status.last_pass.at : undefined;
  return (
    <dl class="facts">
      <dt>Lease holder</dt>
      <dd>
        {status.holder ?? <span class="muted">none: no archivist is working{status.enabled ? "" : " (ARCHIVIST=off on this server)"}</span>}
        {status.holder && status.expires_at && (
          <span class="muted small">
            {" "}
            (lease renews before it ends <Time iso={status.expires_at} />)
          </span>
        )}
      </dd>
      <dt>Language model</dt>
      <dd>
        {status.llm === null ? (
          <span class="muted">unknown (no archivist has started)</span>
        ) : status.llm ? (
          `on${status.provider ? ` (${status.provider})` : ""}`
        ) : (
          "off: conflicts are reported to their authors, not merged"
        )}
      </dd>
      <dt>Last pass</dt>
      <dd>
        {passAt ? <Time iso={passAt} /> : <span class="muted">none yet</span>}
        {status.last_pass && <div class="muted small">{passSummary(status.last_pass)}</div>}
      </dd>
    </dl>
  );
}
