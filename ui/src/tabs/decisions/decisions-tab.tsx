// The Decisions tab: what the team decided and why, newest first, filtered by project, agent, tag
// and keywords, superseded decisions on request; each row opens to the whole record.

import { useMemo, useState } from "preact/hooks";
import { api, query } from "../../api.js";
import { Field } from "../../components/fields.js";
import { PagedList } from "../../components/paged-list.js";
import { AgentSelect, ProjectSelect, projectValue } from "../../components/pickers.js";
import { useDebounced, useLiveRefresh, usePaged } from "../../hooks.js";
import type { Decision } from "../../../../src/wire/decisions.js";
import { MemoryDetailDialog } from "../memory/memory-detail.js";
import { DecisionCard } from "./decision-card.js";
import { DecisionDialog } from "./decision-dialog.js";
import { useTaskTitles } from "./task-titles.js";

interface Filters {
  project: string;
  agent: string;
  tag: string;
  q: string;
  superseded: boolean;
}

const NO_FILTERS: Filters = { project: "", agent: "", tag: "", q: "", superseded: false };

const filterParams = (filters: Filters) => ({
  project: projectValue(filters.project),
  agent: filters.agent || undefined,
  tag: filters.tag.trim() || undefined,
  q: filters.q.trim() || undefined,
  include_superseded: filters.superseded || undefined,
});

export function DecisionsTab() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [entry, setEntry] = useState<string | undefined>(undefined);
  const [other, setOther] = useState<string | undefined>(undefined);
  const set = (change: Partial<Filters>) => setFilters((current) => ({ ...current, ...change }));
  // Typing settles before the list is asked again.
  const tag = useDebounced(filters.tag, 400);
  const q = useDebounced(filters.q, 400);
  const settled = { ...filters, tag, q };
  const filterKey = JSON.stringify(settled);

  const paged = usePaged<Decision>((cursor, limit) => api.get<Decision[]>("/decisions" + query({ ...filterParams(settled), limit, cursor })), [filterKey], 25);
  useLiveRefresh(["decision.recorded"], paged.refresh);
  const known = useMemo(() => new Map(paged.items.map((decision) => [decision.id, decision])), [paged.items]);
  const taskTitles = useTaskTitles(paged.items.map((decision) => decision.task_id));

  const narrowed = filters.project !== "" || filters.agent !== "" || filters.tag.trim() !== "" || filters.q.trim() !== "";
  const hasFilter = narrowed || filters.superseded;
  const empty = narrowed ? (
    <>
      No decision matches these filters.
      {!filters.superseded && " Superseded decisions are left out unless you include them."}
    </>
  ) : (
    "No decision recorded yet. Agents record one with the decision_record tool or POST /decisions: what was decided, why, and the alternatives rejected."
  );

  return (
    <div class="decisions-tab">
      <div class="toolbar">
        <fieldset class="filters decision-filters">
          <legend class="visually-hidden">Filters</legend>
          <Field label="Keywords (decision and rationale)" className="keyword-field">
            <input type="search" value={filters.q} onInput={(event) => set({ q: event.currentTarget.value })} placeholder="e.g. queue" />
          </Field>
          <ProjectSelect label="Project" value={filters.project} onChange={(project) => set({ project })} emptyLabel="any project" />
          <AgentSelect label="Agent" value={filters.agent} onChange={(agent) => set({ agent })} emptyLabel="anyone" />
          <Field label="Tag">
            <input type="text" value={filters.tag} onInput={(event) => set({ tag: event.currentTarget.value })} />
          </Field>
          <label class="check filter-check">
            <input type="checkbox" checked={filters.superseded} onChange={(event) => set({ superseded: event.currentTarget.checked })} />
            Include superseded
          </label>
          {hasFilter && (
            <button type="button" class="link-button clear-filters" onClick={() => setFilters(NO_FILTERS)}>
              Clear filters
            </button>
          )}
        </fieldset>
      </div>
      <section aria-label="Decisions, newest first" class="decision-list-section">
        <PagedList paged={paged} empty={empty}>
          {(items) => (
            <ol class="decision-list">
              {items.map((decision) => (
                <li key={decision.id}>
                  <DecisionCard decision={decision} level={2} collapsible known={known} taskTitles={taskTitles} onOpenEntry={setEntry} onOpenDecision={setOther} />
                </li>
              ))}
            </ol>
          )}
        </PagedList>
      </section>
      {entry && <MemoryDetailDialog id={entry} onClose={() => setEntry(undefined)} />}
      {other && <DecisionDialog id={other} onClose={() => setOther(undefined)} />}
    </div>
  );
}
