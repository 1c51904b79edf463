// One decision by id, in a dialog: opened from a link to the decision that superseded another, or
// to the one a decision replaces; following such links inside it keeps a way back.

import { useState } from "preact/hooks";
import { ApiError, api, encode } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { ErrorNote, Loading } from "../../components/feedback.js";
import { shortId } from "../../format.js";
import { useLiveRefresh, useLoad } from "../../hooks.js";
import type { Decision } from "../../../../src/wire/decisions.js";
import { MemoryDetailDialog } from "../memory/memory-detail.js";
import { DecisionCard } from "./decision-card.js";
import { useTaskTitles } from "./task-titles.js";

interface DecisionDialogProps {
  id: string;
  onClose: () => void;
  /** The task whose page opened it, if any (its decisions do not link to it again). */
  currentTask?: string | undefined;
}

export function DecisionDialog({ id: firstId, onClose, currentTask }: DecisionDialogProps) {
  const [trail, setTrail] = useState<string[]>([firstId]);
  const [entry, setEntry] = useState<string | undefined>(undefined);
  const id = trail[trail.length - 1] ?? firstId;
  const decision = useLoad(async () => (await api.get<Decision>(`/decisions/${encode(id)}`)).data, [id]);
  // A later decision may supersede this one while it is open.
  useLiveRefresh(["decision.recorded"], decision.reload);
  const titles = useTaskTitles([decision.data?.task_id ?? null]);
  const gone = decision.error instanceof ApiError && decision.error.status === 404;
  const open = (next: string) => setTrail((current) => [...current, next]);
  return (
    <Dialog title={`Decision ${shortId(id)}`} onClose={onClose} wide>
      {trail.length > 1 && (
        <p>
          <button type="button" class="link-button" onClick={() => setTrail((current) => current.slice(0, -1))}>
            ← Back to decision {shortId(trail[trail.length - 2] ?? "")}
          </button>
        </p>
      )}
      {decision.loading && !decision.data && <Loading />}
      {gone ? (
        <p class="empty" role="status">
          This decision does not exist, or it belongs to a project you cannot see.
        </p>
      ) : (
        decision.error !== undefined && <ErrorNote error={decision.error} onRetry={decision.reload} />
      )}
      {decision.data && !gone && (
        <DecisionCard key={decision.data.id} decision={decision.data} level={3} onOpenEntry={setEntry} onOpenDecision={open} taskTitles={titles} currentTask={currentTask} />
      )}
      {entry && <MemoryDetailDialog id={entry} onClose={() => setEntry(undefined)} />}
    </Dialog>
  );
}
