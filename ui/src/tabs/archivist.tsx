// The archivist: its status, its log (GET /logs, newest first) and the synthesis docs it writes.

import { useState } from "preact/hooks";
import { api, query } from "../api.js";
import { loadArchivistStatus } from "../archivist-status.js";
import { ArchivistFacts } from "../components/archivist-facts.js";
import { ErrorNote, Loading } from "../components/feedback.js";
import { Field } from "../components/fields.js";
import { PagedList } from "../components/paged-list.js";
import { Pill } from "../components/pills.js";
import { Time } from "../components/time.js";
import { useApp } from "../context.js";
import { useDebounced, useLiveRefresh, useLoad, usePaged } from "../hooks.js";
import type { LogEntry } from "../../../src/wire/logs.js";
import type { MemoryEntry } from "../../../src/wire/memory.js";
import { MemoryCard } from "./memory/memory-card.js";
import { MemoryDetailDialog } from "./memory/memory-detail.js";

export function ArchivistTab() {
  const { agents } = useApp();
  const [level, setLevel] = useState<"" | LogEntry["level"]>("");
  const [actionText, setActionText] = useState("");
  const [detail, setDetail] = useState<string | undefined>(undefined);
  const action = useDebounced(actionText.trim(), 400);
  const status = useLoad(loadArchivistStatus, []);
  const logs = usePaged<LogEntry>((cursor, limit) => api.get<LogEntry[]>("/logs" + query({ level: level || undefined, action: action || undefined, limit, cursor })), [level, action], 50);
  const archivistId = agents.find((agent) => agent.role === "archivist")?.agent_id ?? "archivist";
  const docs = usePaged<MemoryEntry>(
    (cursor, limit) => api.get<MemoryEntry[]>("/memory" + query({ type: "doc", tag: "synthesis", agent: archivistId, limit, cursor })),
    [archivistId],
    10,
  );
  useLiveRefresh(["archivist.*"], () => {
    status.reload();
    logs.refresh();
  }, 1000);
  useLiveRefresh(["memory.*"], docs.refresh, 1000);
  const archivistAgent = agents.find((agent) => agent.role === "archivist");

  return (
    <div class="archivist-tab">
      <section class="panel" aria-labelledby="status-title">
        <h2 id="status-title">Status</h2>
        {status.loading && !status.data && <Loading />}
        {status.error !== undefined && <ErrorNote error={status.error} onRetry={status.reload} />}
        <p class="row-line">
          {archivistAgent ? (
            <>
              <span class={archivistAgent.online ? "presence presence-on" : "presence"} aria-hidden="true" />
              <span>
                Agent <strong>{archivistAgent.agent_id}</strong> is {archivistAgent.online ? "online" : "offline"}
              </span>
              <span class="muted small">
                (seen <Time iso={archivistAgent.last_seen_at} />)
              </span>
            </>
          ) : (
            <span class="muted">No agent has the archivist role.</span>
          )}
        </p>
        {status.data && <ArchivistFacts status={status.data} />}
      </section>

      <section aria-labelledby="docs-title">
        <h2 id="docs-title">Synthesis docs</h2>
        <PagedList paged={docs} empty="No synthesis doc yet. The archivist writes one per project on its scheduled pass.">
          {(items) => (
            <div class="card-list">
              {items.map((entry) => (
                <MemoryCard key={entry.id} entry={entry} onOpen={setDetail} />
              ))}
            </div>
          )}
        </PagedList>
      </section>

      <section aria-labelledby="log-title">
        <h2 id="log-title">Log</h2>
        <fieldset class="filters">
          <legend class="visually-hidden">Log filters</legend>
          <Field label="Level">
            <select value={level} onChange={(event) => setLevel(event.currentTarget.value as typeof level)}>
              <option value="">any level</option>
              <option value="error">error</option>
              <option value="warn">warn</option>
              <option value="info">info</option>
              <option value="debug">debug</option>
            </select>
          </Field>
          <Field label="Action">
            <input type="text" value={actionText} placeholder="e.g. merge, pass, conflict.reported" onInput={(event) => setActionText(event.currentTarget.value)} />
          </Field>
        </fieldset>
        <PagedList paged={logs} empty="The log is empty.">
          {(items) => (
            <ol class="log-list">
              {items.map((entry) => (
                <li key={entry.id} class={`log-entry log-${entry.level}`}>
                  <details>
                    <summary class="log-row">
                      <span class="event-time">
                        <Time iso={entry.created_at} />
                      </span>
                      <Pill tone={`level-${entry.level}`}>{entry.level}</Pill>
                      <span class="mono small">{entry.action}</span>
                      <span class="log-message">{entry.message}</span>
                      <span class="muted small">
                        {entry.source} · {entry.agent_id}
                      </span>
                    </summary>
                    <pre class="output">{JSON.stringify(entry.details, null, 2)}</pre>
                  </details>
                </li>
              ))}
            </ol>
          )}
        </PagedList>
      </section>
      {detail && <MemoryDetailDialog id={detail} onClose={() => setDetail(undefined)} />}
    </div>
  );
}
