// A task's decisions, on the task's page: every decision recorded for it, newest first, superseded
// ones included and marked, kept current from the event stream.

import { useMemo, useState } from "preact/hooks";
import { api, query } from "../../api.js";
import { PagedList } from "../../components/paged-list.js";
import { useLiveRefresh, usePaged } from "../../hooks.js";
import type { Decision } from "../../../../src/wire/decisions.js";
import { MemoryDetailDialog } from "../memory/memory-detail.js";
import { DecisionCard } from "./decision-card.js";
import { DecisionDialog } from "./decision-dialog.js";

export function TaskDecisions({ taskId }: { taskId: string }) {
  const paged = usePaged<Decision>(
    (cursor, limit) => api.get<Decision[]>("/decisions" + query({ task_id: taskId, include_superseded: true, limit, cursor })),
    [taskId],
    20,
  );
  // A new decision may be this task's, or supersede one of them from elsewhere.
  useLiveRefresh(["decision.recorded"], paged.refresh);
  const [entry, setEntry] = useState<string | undefined>(undefined);
  const [other, setOther] = useState<string | undefined>(undefined);
  const known = useMemo(() => new Map(paged.items.map((decision) => [decision.id, decision])), [paged.items]);
  const count = paged.items.length;
  return (
    <section class="task-decisions" aria-labelledby="task-decisions-title">
      <h3 class="subheading" id="task-decisions-title">
        Decisions{count > 0 && " "}
        {count > 0 && <span class="count">{`${count}${paged.hasMore ? "+" : ""}`}</span>}
      </h3>
      <PagedList paged={paged} empty="No decision recorded for this task yet.">
        {(items) => (
          <ol class="decision-list">
            {items.map((decision) => (
              <li key={decision.id}>
                <DecisionCard decision={decision} level={4} known={known} currentTask={taskId} onOpenEntry={setEntry} onOpenDecision={setOther} />
              </li>
            ))}
          </ol>
        )}
      </PagedList>
      {entry && <MemoryDetailDialog id={entry} onClose={() => setEntry(undefined)} />}
      {other && <DecisionDialog id={other} currentTask={taskId} onClose={() => setOther(undefined)} />}
    </section>
  );
}
