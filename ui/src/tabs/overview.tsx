// The team at a glance: who is online and on what, the task board's counts, unread messages,
// projects, the newest events and the archivist.

import { useEffect, useState } from "preact/hooks";
import { api, query } from "../api.js";
import { loadArchivistStatus } from "../archivist-status.js";
import { ArchivistFacts } from "../components/archivist-facts.js";
import { EventRow } from "../components/event-row.js";
import { Empty, ErrorNote, Loading } from "../components/feedback.js";
import { useApp } from "../context.js";
import { plural } from "../format.js";
import { useLiveRefresh, useLoad } from "../hooks.js";
import { liveStream } from "../live.js";
import { latestEvents, newestDistinct } from "../recent-events.js";
import type { EventRecord } from "../../../src/wire/events.js";
import type { Health } from "../../../src/wire/health.js";
import type { UnreadCount } from "../../../src/wire/messages.js";
import type { Task, TaskCounts } from "../../../src/wire/tasks.js";

const RECENT = 15;
/** Claimed tasks read to name them (the counts come from /tasks/counts). */
const PAGE = 500;

async function loadTaskCounts() {
  const [counts, claimed] = await Promise.all([api.get<TaskCounts>("/tasks/counts"), api.get<Task[]>("/tasks" + query({ status: "claimed", limit: PAGE }))]);
  return { ...counts.data, claimedTitles: new Map(claimed.data.map((task) => [task.id, task.title])) };
}

function Count({ value, label, href }: { value: number | undefined; label: string; href: string }) {
  return (
    <a class="stat" href={href}>
      <span class="stat-value">{value === undefined ? "…" : value}</span>
      <span class="stat-label">{label}</span>
    </a>
  );
}

export function OverviewTab() {
  const { agents, projects } = useApp();
  const tasks = useLoad(loadTaskCounts, []);
  const inbox = useLoad(async () => (await api.get<UnreadCount>("/messages/inbox/count")).data.unread, []);
  const archivist = useLoad(loadArchivistStatus, []);
  const health = useLoad(async () => (await api.get<Health>("/health")).data, []);
  const recent = useLoad(() => latestEvents(RECENT), []);
  const [live, setLive] = useState<EventRecord[]>([]);

  useLiveRefresh(["task.*"], tasks.reload);
  useLiveRefresh(["message.*"], inbox.reload);
  useLiveRefresh(["archivist.*"], archivist.reload, 1000);
  useEffect(
    () =>
      liveStream.subscribe((signal) => {
        if (signal.kind === "reset") {
          setLive([]);
          recent.reload();
        } else setLive((current) => [signal.event, ...current].slice(0, RECENT));
      }),
    [recent.reload],
  );

  const events = newestDistinct(live, recent.data ?? []).slice(0, RECENT);
  const online = agents.filter((agent) => agent.online);
  const titles = tasks.data?.claimedTitles;

  return (
    <div class="overview">
      <section class="stats" aria-label="Counts">
        <Count value={tasks.data?.open} label="open tasks" href="#/tasks" />
        <Count value={tasks.data?.claimed} label="claimed tasks" href="#/tasks" />
        <Count value={tasks.data?.blocked} label="blocked tasks" href="#/tasks" />
        <Count value={inbox.data} label="unread messages" href="#/messages" />
        <Count value={online.length} label={`of ${plural(agents.length, "agent")} online`} href="#/agents" />
        <Count value={projects.length} label="projects" href="#/projects" />
      </section>
      {tasks.error !== undefined && <ErrorNote error={tasks.error} context="Task counts" onRetry={tasks.reload} />}
      {inbox.error !== undefined && <ErrorNote error={inbox.error} context="Unread messages" onRetry={inbox.reload} />}

      <div class="overview-grid">
        <section class="panel" aria-labelledby="online-title">
          <h2 id="online-title">Agents online</h2>
          {online.length === 0 ? (
            <Empty>No agent is online. Agents count as online for 5 minutes after a request, or while they hold the event stream.</Empty>
          ) : (
            <ul class="plain-list">
              {online.map((agent) => (
                <li key={agent.agent_id} class="online-agent">
                  <div class="row-line">
                    <span class="presence presence-on" aria-hidden="true" />
                    <strong>{agent.display_name ?? agent.agent_id}</strong>
                    {agent.display_name && <span class="muted">{agent.agent_id}</span>}
                    <span class="muted small">{agent.role}</span>
                    {agent.current_project && <span class="muted small">in {agent.current_project}</span>}
                  </div>
                  {agent.claimed_tasks.length > 0 ? (
                    <ul class="claimed-list">
                      {agent.claimed_tasks.map((id) => (
                        <li key={id}>
                          <a href={`#/tasks/${id}`}>{titles?.get(id) ?? id.slice(0, 8)}</a>
                        </li>
                      ))}
                    </ul>
                  ) : (
                    <p class="muted small">No claimed task.</p>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>

        <section class="panel" aria-labelledby="archivist-title">
          <h2 id="archivist-title">Archivist</h2>
          {archivist.loading && !archivist.data && <Loading />}
          {archivist.error !== undefined && <ErrorNote error={archivist.error} onRetry={archivist.reload} />}
          {archivist.data && <ArchivistFacts status={archivist.data} />}
          <p class="small muted">Embeddings: {health.data ? health.data.embeddings : health.error !== undefined ? "unknown" : "…"}</p>
        </section>

        <section class="panel" aria-labelledby="projects-title">
          <h2 id="projects-title">Projects</h2>
          {projects.length === 0 ? (
            <Empty>No project yet. Create one in the Projects tab.</Empty>
          ) : (
            <ul class="plain-list">
              {projects.map((project) => (
                <li key={project.id} class="row-line">
                  <strong>{project.name}</strong>
                  <span class="muted small">{plural(project.member_count, "member")}</span>
                  {project.description && <span class="muted small ellipsis">{project.description}</span>}
                </li>
              ))}
            </ul>
          )}
        </section>

        <section class="panel panel-wide" aria-labelledby="recent-title">
          <h2 id="recent-title">Recent events</h2>
          {recent.loading && events.length === 0 && <Loading />}
          {recent.error !== undefined && <ErrorNote error={recent.error} onRetry={recent.reload} />}
          {!recent.loading && recent.error === undefined && events.length === 0 && <Empty>Nothing has happened yet.</Empty>}
          {events.length > 0 && (
            <ul class="event-list">
              {events.map((event) => (
                <EventRow key={event.id} event={event} />
              ))}
            </ul>
          )}
        </section>
      </div>
    </div>
  );
}
