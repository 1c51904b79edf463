// Each agent's last session handoff: what it did, what is in progress, what comes next. One paged
// list (GET /sessions/handoffs), newest first; reading it moves no agent's "seen until" cursor.

import { useState } from "preact/hooks";
import { api, query } from "../api.js";
import { PagedList } from "../components/paged-list.js";
import { Time } from "../components/time.js";
import { useApp } from "../context.js";
import { plural, shortId } from "../format.js";
import { useLiveRefresh, usePaged } from "../hooks.js";
import type { Handoff } from "../../../src/wire/sessions.js";
import { MemoryDetailDialog } from "./memory/memory-detail.js";

export function SessionsTab() {
  const { agents } = useApp();
  const [entry, setEntry] = useState<string | undefined>(undefined);
  const handoffs = usePaged<Handoff>((cursor, limit) => api.get<Handoff[]>("/sessions/handoffs" + query({ limit, cursor })), [], 50);
  useLiveRefresh(["session.*"], handoffs.refresh);
  const byId = new Map(agents.map((agent) => [agent.agent_id, agent]));
  const handedOff = new Set(handoffs.items.map((handoff) => handoff.agent_id));
  // Known only once every handoff is loaded.
  const without = handoffs.loading || handoffs.hasMore ? [] : agents.filter((agent) => !handedOff.has(agent.agent_id));

  return (
    <div class="sessions-tab">
      <PagedList paged={handoffs} empty="No agent has handed off a session yet.">
        {(items) => (
          <div class="handoff-list">
            {items.map((handoff) => {
              const agent = byId.get(handoff.agent_id);
              return (
                <article key={handoff.agent_id} class="panel handoff" aria-labelledby={`handoff-${handoff.agent_id}`}>
                  <header class="row-line">
                    <h2 id={`handoff-${handoff.agent_id}`} class="handoff-agent">
                      <span class={agent?.online ? "presence presence-on" : "presence"} aria-hidden="true" /> {handoff.agent_id}
                    </h2>
                    <span class="muted small">
                      handed off <Time iso={handoff.created_at} />
                      {handoff.host ? ` from ${handoff.host}` : ""}
                    </span>
                  </header>
                  <p class="handoff-summary">{handoff.summary}</p>
                  <List title="In progress" items={handoff.in_progress} />
                  <List title="Next steps" items={handoff.next_steps} />
                  {handoff.memory_refs.length > 0 && (
                    <div>
                      <h3 class="subheading">Memory it points to</h3>
                      <ul class="inline-list">
                        {handoff.memory_refs.map((id) => (
                          <li key={id}>
                            <button type="button" class="link-button mono" onClick={() => setEntry(id)}>
                              {shortId(id)}
                            </button>
                          </li>
                        ))}
                      </ul>
                    </div>
                  )}
                  {agent && <p class="muted small">Now: {plural(agent.claimed_tasks.length, "claimed task")}.</p>}
                </article>
              );
            })}
          </div>
        )}
      </PagedList>
      {without.length > 0 && (
        <section class="panel" aria-labelledby="no-handoff-title">
          <h2 id="no-handoff-title" class="subheading">
            No handoff yet
          </h2>
          <ul class="inline-list">
            {without.map((agent) => (
              <li key={agent.agent_id}>{agent.agent_id}</li>
            ))}
          </ul>
        </section>
      )}
      {entry && <MemoryDetailDialog id={entry} onClose={() => setEntry(undefined)} />}
    </div>
  );
}

function List({ title, items }: { title: string; items: string[] }) {
  if (items.length === 0) return null;
  return (
    <div>
      <h3 class="subheading">{title}</h3>
      <ul class="bullet-list">
        {items.map((item, index) => (
          <li key={index}>{item}</li>
        ))}
      </ul>
    </div>
  );
}
