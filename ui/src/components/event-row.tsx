// One event as a line: when, what, who, where and the payload's gist.

import { shortId } from "../format.js";
import type { EventRecord } from "../../../src/wire/events.js";
import { Time } from "./time.js";

function text(value: unknown): string | undefined {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : undefined;
}

/** The payload fields a person wants to see first, short ids shortened. */
function eventGist(event: EventRecord): string {
  const payload = event.payload;
  const parts: string[] = [];
  const id = text(payload.memory_id) ?? text(payload.decision_id) ?? text(payload.task_id) ?? text(payload.message_id) ?? text(payload.edge_id) ?? text(payload.handoff_id) ?? text(payload.feed_id) ?? text(payload.link_id) ?? text(payload.token_id);
  if (id) parts.push(shortId(id));
  for (const key of ["type", "status", "assigned_to", "reason", "to", "holder", "agent_id", "from", "kind", "rel", "ingested", "failures", "peer_name", "applied"]) {
    const value = text(payload[key]);
    if (value !== undefined && value !== event.agent_id) parts.push(`${key.replace("_", " ")}: ${value}`);
  }
  if (event.type === "archivist.lease" && payload.holder === null) parts.push("released");
  return parts.join(" · ");
}

/** The cells of an event's line, for a list item or a disclosure's summary. */
export function EventCells({ event }: { event: EventRecord }) {
  const family = event.type.split(".")[0] ?? "";
  return (
    <>
      <span class="event-time">
        <Time iso={event.created_at} />
      </span>
      <span class={`event-type family-${family}`}>{event.type}</span>
      <span class="event-agent">{event.agent_id}</span>
      <span class="event-gist muted">
        {event.project ? <span class="event-project">{event.project} </span> : null}
        {eventGist(event)}
      </span>
    </>
  );
}

export function EventRow({ event }: { event: EventRecord }) {
  return (
    <li class="event-row">
      <EventCells event={event} />
    </li>
  );
}
