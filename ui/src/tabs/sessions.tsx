// Each agent's last session handoff: what it did, what is in progress, what comes next. Read with
// peek=true so looking never moves the agent's own "seen until" cursor.

import { useState } from "preact/hooks";
import { api, encode, query } from "../api.js";
import { Empty, ErrorNote, Loading } from "../components/feedback.js";
import { Time } from "../components/time.js";
import { useApp } from "../context.js";
import { plural, shortId } from "../format.js";
import { useLiveRefresh, useLoad } from "../hooks.js";
import type { Agent, SessionPack } from "../types.js";
import { MemoryDetailDialog } from "./memory/memory-detail.js";

interface AgentSession {
  agent: Agent;
  pack: SessionPack | undefined;
  error: unknown;
}

/** Runs `work` over `items` with at most `width` at once, keeping the order. */
async function mapLimited<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}

export function SessionsTab() {
  const { agents } = useApp();
  const [entry, setEntry] = useState<string | undefined>(undefined);
  const key = agents.map((agent) => agent.agent_id).join(",");
  const sessions = useLoad(
    () =>
      mapLimited(agents, 4, async (agent): Promise<AgentSession> => {
        try {
          const response = await api.get<SessionPack>(`/sessions/handoff/${encode(agent.agent_id)}` + query({ peek: true }));
          return { agent, pack: response.data, error: undefined };
        } catch (error) {
          return { agent, pack: undefined, error };
        }
      }),
    [key],
  );
  useLiveRefresh(["session.*"], sessions.reload);

  if (sessions.loading && !sessions.data) return <Loading />;
  if (sessions.error !== undefined && !sessions.data) return <ErrorNote error={sessions.error} onRetry={sessions.reload} />;
  const rows = sessions.data ?? [];
  const withHandoff = rows
    .filter((row) => row.pack?.last_handoff)
    .sort((a, b) => (b.pack?.last_handoff?.created_at ?? "").localeCompare(a.pack?.last_handoff?.created_at ?? ""));
  const without = rows.filter((row) => !row.pack?.last_handoff);

  return (
    <div class="sessions-tab">
      {rows.length === 0 && <Empty>No agent yet.</Empty>}
      {rows.length > 0 && withHandoff.length === 0 && <Empty>No agent has handed off a session yet.</Empty>}
      <div class="handoff-list">
        {withHandoff.map(({ agent, pack }) => {
          const handoff = pack?.last_handoff;
          if (!pack || !handoff) return null;
          return (
            <article key={agent.agent_id} class="panel handoff" aria-labelledby={`handoff-${agent.agent_id}`}>
              <header class="row-line">
                <h2 id={`handoff-${agent.agent_id}`} class="handoff-agent">
                  <span class={agent.online ? "presence presence-on" : "presence"} aria-hidden="true" /> {agent.agent_id}
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
              <p class="muted small">
                Now: {plural(pack.claimed_tasks.length, "claimed task")}, {plural(pack.unread_messages.length, "unread message")}
                {pack.memory_delta_since_last_seen.length > 0 ? `, ${plural(pack.memory_delta_since_last_seen.length, "memory change")} since it last looked${pack.delta_truncated ? " (more not counted)" : ""}` : ""}.
              </p>
            </article>
          );
        })}
      </div>
      {without.length > 0 && (
        <section class="panel" aria-labelledby="no-handoff-title">
          <h2 id="no-handoff-title" class="subheading">
            No handoff yet
          </h2>
          <ul class="inline-list">
            {without.map(({ agent, error }) => (
              <li key={agent.agent_id}>
                {agent.agent_id}
                {error !== undefined && <ErrorNote error={error} />}
              </li>
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
