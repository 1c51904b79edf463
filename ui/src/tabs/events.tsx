// The live event stream, newest first: filters by type (exact or a family such as `task.*`) and
// by agent, a pause that holds new events back until resumed, and older events on demand.

import { useEffect, useRef, useState } from "preact/hooks";
import { Empty, ErrorNote, Loading } from "../components/feedback.js";
import { Field } from "../components/fields.js";
import { AgentSelect } from "../components/pickers.js";
import { EventCells } from "../components/event-row.js";
import { useDebounced, useLoad } from "../hooks.js";
import { liveStream, typeMatches } from "../live.js";
import { latestEvents, newestDistinct } from "../recent-events.js";
import type { EventRecord } from "../../../src/wire/events.js";

const FAMILIES = ["memory.*", "task.*", "message.*", "agent.*", "project.*", "session.*", "graph.*", "archivist.*"];
const STEP = 50;
const MAX_HISTORY = 500;
const MAX_SHOWN = 1000;
const TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?$/;

export function EventsTab() {
  const [typeText, setTypeText] = useState("");
  const [agent, setAgent] = useState("");
  const [paused, setPaused] = useState(false);
  const [count, setCount] = useState(STEP);
  const [live, setLive] = useState<EventRecord[]>([]);
  const [held, setHeld] = useState<EventRecord[]>([]);
  const settledType = useDebounced(typeText.trim(), 400);
  const validType = settledType === "" || TYPE_PATTERN.test(settledType);
  const type = validType ? settledType : "";
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  const history = useLoad(() => latestEvents(count, { type: type || undefined, agent: agent || undefined }), [type, agent, count]);

  useEffect(() => {
    setLive([]);
    setHeld([]);
  }, [type, agent]);

  useEffect(
    () =>
      liveStream.subscribe((signal) => {
        if (signal.kind === "reset") {
          history.reload();
          return;
        }
        const event = signal.event;
        if (type && !typeMatches(event.type, [type])) return;
        if (agent && event.agent_id !== agent) return;
        if (pausedRef.current) setHeld((current) => [event, ...current].slice(0, MAX_SHOWN));
        else setLive((current) => [event, ...current].slice(0, MAX_SHOWN));
      }),
    [type, agent, history.reload],
  );

  const resume = () => {
    setLive((current) => [...held, ...current].slice(0, MAX_SHOWN));
    setHeld([]);
    setPaused(false);
  };

  const events = newestDistinct(live, history.data ?? []);

  return (
    <div class="events-tab">
      <div class="toolbar">
        <fieldset class="filters">
          <legend class="visually-hidden">Filters</legend>
          <Field label="Type or family">
            <input
              type="text"
              list="event-families"
              value={typeText}
              placeholder="e.g. task.*"
              onInput={(event) => setTypeText(event.currentTarget.value)}
              aria-invalid={!validType}
              aria-describedby={validType ? undefined : "type-problem"}
            />
          </Field>
          <datalist id="event-families">
            {FAMILIES.map((family) => (
              <option key={family} value={family} />
            ))}
          </datalist>
          <AgentSelect label="Agent" value={agent} onChange={setAgent} emptyLabel="any agent" />
        </fieldset>
        <span class="spacer" />
        {paused ? (
          <button type="button" class="primary" onClick={resume}>
            Resume{held.length > 0 ? ` (${held.length} new)` : ""}
          </button>
        ) : (
          <button type="button" onClick={() => setPaused(true)}>
            Pause
          </button>
        )}
      </div>
      {!validType && (
        <p class="error-note" id="type-problem" role="alert">
          Use an event type such as memory.written, or a family such as task.*.
        </p>
      )}
      {paused && (
        <p class="stale-note" role="status">
          Paused: new events are held back{held.length > 0 ? ` (${held.length} so far)` : ""}.
        </p>
      )}
      {history.loading && events.length === 0 && <Loading />}
      {history.error !== undefined && <ErrorNote error={history.error} onRetry={history.reload} />}
      {!history.loading && history.error === undefined && events.length === 0 && <Empty>No event{type || agent ? " matches these filters" : " yet"}.</Empty>}
      {events.length > 0 && (
        <ol class="event-table" aria-label="Events, newest first">
          {events.map((event) => (
            <li key={event.id} class="event-item">
              <details>
                <summary class="event-row">
                  <EventCells event={event} />
                </summary>
                <pre class="output">{JSON.stringify(event, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
      {history.data && history.data.length >= count && count < MAX_HISTORY && (
        <div class="load-more">
          <button type="button" onClick={() => setCount(Math.min(MAX_HISTORY, count + STEP))} disabled={history.loading}>
            {history.loading ? "Loading…" : "Load older events"}
          </button>
        </div>
      )}
    </div>
  );
}
