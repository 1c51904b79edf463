// The Pulse tab: a project's knowledge graph as a picture (GET /pulse), with its counts, the
// central, hot and conflicting entries, who is active and what each agent works on.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, query } from "../../api.js";
import { Field } from "../../components/fields.js";
import { Empty, ErrorNote, Loading } from "../../components/feedback.js";
import { Time } from "../../components/time.js";
import { useApp } from "../../context.js";
import { plural } from "../../format.js";
import { useLiveRefresh, useLoad } from "../../hooks.js";
import type { Pulse } from "../../../../src/wire/knowledge.js";
import { MemoryDetailDialog } from "../memory/memory-detail.js";
import { PulseGraphView, PulseLegend } from "./pulse-graph.js";

/** The server keeps a pulse this long; asking again sooner gets the same answer. */
const CACHED_MS = 30_000;

/**
 * Re-reads after `memory.*` and `graph.*` events, once the server's cached answer has expired, so
 * that the change is in what comes back and a burst of events costs one request.
 */
function useLivePulse(generatedAt: string | undefined, reload: () => void): void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const generated = useRef(generatedAt);
  generated.current = generatedAt;
  useEffect(() => () => clearTimeout(timer.current), []);
  useLiveRefresh(["memory.*", "graph.*"], () => {
    if (timer.current !== undefined) return;
    const at = generated.current ? Date.parse(generated.current) : Date.now();
    const wait = Math.min(CACHED_MS + 1000, Math.max(0, at + CACHED_MS + 500 - Date.now()));
    timer.current = setTimeout(() => {
      timer.current = undefined;
      reload();
    }, wait);
  }, 1000);
}

function Count({ value, label }: { value: number; label: string }) {
  return (
    <div class="stat pulse-stat">
      <span class="stat-value">{value}</span>
      <span class="stat-label">{label}</span>
    </div>
  );
}

function scopeText(pulse: Pulse, asked: string): string {
  if (pulse.scope === "all") return "Everything you can see, across projects.";
  if (pulse.scope === "global") return "Global entries (no project).";
  const project = pulse.project ?? "";
  return asked === "" ? `Project ${project} (your current project).` : `Project ${project}.`;
}

export function PulseTab() {
  const { projects } = useApp();
  const [project, setProject] = useState("");
  const [code, setCode] = useState(false);
  const [entry, setEntry] = useState<string | undefined>(undefined);
  // Compiled code takes part only when asked for: a compile's thousands of entries would fill the picture.
  const pulse = useLoad(async () => (await api.get<Pulse>("/pulse" + query({ project: project || undefined, include_code: code || undefined }))).data, [project, code]);
  useLivePulse(pulse.data?.generated_at, pulse.reload);
  const data = pulse.data;

  return (
    <div class="pulse-tab">
      <div class="toolbar">
        <fieldset class="filters">
          <legend class="visually-hidden">Selection</legend>
          <Field label="Project">
            <select value={project} onChange={(event) => setProject(event.currentTarget.value)}>
              <option value="">All</option>
              {projects.map((candidate) => (
                <option key={candidate.id} value={candidate.id}>
                  {candidate.name === candidate.id ? candidate.id : `${candidate.name} (${candidate.id})`}
                </option>
              ))}
            </select>
          </Field>
          <label class="check filter-check">
            <input type="checkbox" checked={code} onChange={(event) => setCode(event.currentTarget.checked)} />
            Include compiled code
          </label>
        </fieldset>
        {data && (
          <p class="pulse-scope muted small" role="status">
            {scopeText(data, project)} As of <Time iso={data.generated_at} />.
          </p>
        )}
      </div>
      {pulse.loading && !data && <Loading label="Taking the pulse…" />}
      {pulse.error !== undefined && <ErrorNote error={pulse.error} context="Could not load the pulse" onRetry={pulse.reload} />}
      {data && <PulseBody pulse={data} onOpen={setEntry} />}
      {entry && <MemoryDetailDialog id={entry} onClose={() => setEntry(undefined)} />}
    </div>
  );
}

function PulseBody({ pulse, onOpen }: { pulse: Pulse; onOpen: (id: string) => void }) {
  const { counts, graph } = pulse;
  const empty = counts.entries === 0 || graph.nodes.length === 0;
  return (
    <>
      <div class="pulse-main">
        <section class="panel pulse-picture" aria-labelledby="pulse-graph-title">
          <h2 id="pulse-graph-title">Knowledge graph</h2>
          {empty ? (
            <Empty>No shared entry here yet. As agents write to memory and link entries (supports, derived from, contradicts…), the graph appears here.</Empty>
          ) : (
            <>
              {graph.truncated && (
                <p class="pulse-truncated small" role="note">
                  Showing the {graph.nodes.length} most central of {counts.entries} entries.
                </p>
              )}
              <PulseGraphView graph={graph} onOpen={onOpen} title={`Knowledge graph: ${plural(graph.nodes.length, "entry", "entries")}, ${plural(graph.edges.length, "link")}`} />
              <PulseLegend />
            </>
          )}
        </section>
        <div class="pulse-side">
          <section class="stats pulse-stats" aria-label="Counts">
            <Count value={counts.entries} label={counts.entries === 1 ? "entry" : "entries"} />
            <Count value={counts.edges} label={counts.edges === 1 ? "link" : "links"} />
            <Count value={counts.open_tasks} label="open tasks" />
            <Count value={counts.claimed_tasks} label="claimed tasks" />
            <Count value={counts.stale_entries} label={counts.stale_entries === 1 ? "stale entry" : "stale entries"} />
            <Count value={counts.agents_online} label={counts.agents_online === 1 ? "agent online" : "agents online"} />
          </section>
          {!empty && <Central pulse={pulse} onOpen={onOpen} />}
          {!empty && <Conflicts pulse={pulse} onOpen={onOpen} />}
        </div>
        <div class="pulse-lists">
          {!empty && <Hot pulse={pulse} onOpen={onOpen} />}
          <Activity pulse={pulse} />
          <Affinities pulse={pulse} />
        </div>
      </div>
    </>
  );
}

function EntryButton({ id, label, onOpen }: { id: string; label: string; onOpen: (id: string) => void }) {
  return (
    <button type="button" class="link-button pulse-entry" onClick={() => onOpen(id)} title={label}>
      {label}
    </button>
  );
}

function Central({ pulse, onOpen }: { pulse: Pulse; onOpen: (id: string) => void }) {
  const top = Math.max(...pulse.central.map((entry) => entry.score), 1e-9);
  return (
    <section class="panel pulse-central" aria-labelledby="pulse-central-title">
      <h2 id="pulse-central-title">Central</h2>
      {pulse.central.length === 0 ? (
        <Empty>No entry stands out yet.</Empty>
      ) : (
        <ol class="plain-list pulse-ranked">
          {pulse.central.map((entry) => (
            <li key={entry.id}>
              <span class="pulse-rank" aria-label={`rank ${entry.rank}`}>
                {entry.rank}
              </span>
              <div class="pulse-ranked-body">
                <EntryButton id={entry.id} label={entry.label} onOpen={onOpen} />
                <meter class="pulse-score" min={0} max={top} value={entry.score} aria-label={`centrality score ${entry.score.toFixed(3)}`} title={`score ${entry.score.toFixed(3)}`} />
              </div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Conflicts({ pulse, onOpen }: { pulse: Pulse; onOpen: (id: string) => void }) {
  return (
    <section class="panel pulse-conflicts" aria-labelledby="pulse-conflicts-title">
      <h2 id="pulse-conflicts-title">Conflicts</h2>
      {pulse.conflicts.length === 0 ? (
        <Empty>No entry contradicts another.</Empty>
      ) : (
        <ul class="plain-list">
          {pulse.conflicts.map((conflict) => (
            <li key={conflict.id} class="pulse-conflict">
              <EntryButton id={conflict.src} label={conflict.src_label} onOpen={onOpen} />
              <span class="pill pill-conflict">contradicts</span>
              <EntryButton id={conflict.dst} label={conflict.dst_label} onOpen={onOpen} />
              {conflict.note && <p class="small muted">{conflict.note}</p>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Hot({ pulse, onOpen }: { pulse: Pulse; onOpen: (id: string) => void }) {
  return (
    <section class="panel pulse-hot" aria-labelledby="pulse-hot-title">
      <h2 id="pulse-hot-title">Hot this week</h2>
      {pulse.hot.length === 0 ? (
        <Empty>Nothing was read in the last 7 days.</Empty>
      ) : (
        <ol class="plain-list">
          {pulse.hot.map((entry) => (
            <li key={entry.id} class="pulse-hot-entry">
              <EntryButton id={entry.id} label={entry.label} onOpen={onOpen} />
              <span class="muted small">
                {plural(entry.reads, "read")} · {plural(entry.readers, "reader")}
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Activity({ pulse }: { pulse: Pulse }) {
  return (
    <section class="panel pulse-activity" aria-labelledby="pulse-activity-title">
      <h2 id="pulse-activity-title">Who is active</h2>
      {pulse.activity.length === 0 ? (
        <Empty>No agent has worked here lately.</Empty>
      ) : (
        <ul class="plain-list">
          {pulse.activity.map((row) => (
            <li key={row.agent_id} class="pulse-agent">
              <div class="row-line">
                <span class={row.online ? "presence presence-on" : "presence"} aria-hidden="true" />
                <strong>{row.agent_id}</strong>
                <span class="visually-hidden">{row.online ? "online" : "offline"}</span>
                <span class="muted small pulse-seen">
                  seen <Time iso={row.last_seen_at} />
                </span>
              </div>
              <p class="small pulse-agent-numbers">
                {plural(row.writes_24h, "write")} · {plural(row.reads_24h, "read")} in 24 h · {row.claimed} claimed · {row.completed_24h} completed in 24 h
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Affinities({ pulse }: { pulse: Pulse }) {
  const byAgent = new Map<string, { tag: string; weight: number }[]>();
  for (const { agent_id, tag, weight } of pulse.affinities) {
    const tags = byAgent.get(agent_id) ?? [];
    tags.push({ tag, weight });
    byAgent.set(agent_id, tags);
  }
  return (
    <section class="panel pulse-affinities" aria-labelledby="pulse-affinities-title">
      <h2 id="pulse-affinities-title">Affinities</h2>
      {byAgent.size === 0 ? (
        <Empty>No agent leans towards a tag yet.</Empty>
      ) : (
        <ul class="plain-list">
          {[...byAgent].map(([agent, tags]) => (
            <li key={agent} class="pulse-affinity">
              <strong>{agent}</strong>
              <ul class="pulse-chips" aria-label={`${agent}'s tags`}>
                {tags
                  .sort((a, b) => b.weight - a.weight)
                  .map(({ tag, weight }) => (
                    <li key={tag} class="pulse-chip" title={`weight ${weight.toFixed(2)}`}>
                      <span class="pulse-chip-tag">
                        {tag} <span class="muted">{Math.round(weight * 100)}%</span>
                      </span>
                      <meter min={0} max={1} value={weight} aria-label={`${tag} weight ${weight.toFixed(2)}`} />
                    </li>
                  ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
