// One decision as it is shown everywhere: what was decided, by whom and when, for which task, and
// whether a later decision replaced it; in full also the rationale (long ones folded), the
// alternatives with why each was rejected, the memory entries it rests on and what it replaces.

import { useId, useState } from "preact/hooks";
import { api, encode } from "../../api.js";
import { CopyButton } from "../../components/copy-button.js";
import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { shortId } from "../../format.js";
import { useLoad } from "../../hooks.js";
import type { Decision } from "../../../../src/wire/decisions.js";

interface DecisionLinks {
  /** Opens a memory entry (the memory detail dialog). */
  onOpenEntry: (id: string) => void;
  /** Opens another decision (the one that superseded this, or the one it replaces). */
  onOpenDecision: (id: string) => void;
  /** Decisions on screen, so that a link to one reads as its text. */
  known?: ReadonlyMap<string, Decision> | undefined;
  /** Task titles by id; a task not in it is named by its id. */
  taskTitles?: ReadonlyMap<string, string> | undefined;
  /** The task whose page this is: a decision of it does not link to it again. */
  currentTask?: string | undefined;
}

interface DecisionCardProps extends DecisionLinks {
  decision: Decision;
  /** The heading level of the decision's text, below the heading of what lists it. */
  level: 2 | 3 | 4;
  /** Folded to its summary until opened (the Decisions tab), or always whole (a task's page). */
  collapsible?: boolean;
}

const clip = (text: string, length: number): string => (text.length > length ? `${text.slice(0, length - 1).trimEnd()}…` : text);

/** A button naming another decision by its text: from the decisions on screen, else read once (decisions never change their text). */
function DecisionLink({ id, known, onOpen }: { id: string; known: ReadonlyMap<string, Decision> | undefined; onOpen: (id: string) => void }) {
  const shown = known?.get(id);
  const read = useLoad(async () => (shown ? undefined : (await api.get<Decision>(`/decisions/${encode(id)}`)).data), [id, shown === undefined]);
  const text = shown?.decision ?? read.data?.decision;
  return (
    <button type="button" class="link-button" onClick={() => onOpen(id)}>
      {text === undefined ? `decision ${shortId(id)}` : `“${clip(text, 90)}”`}
    </button>
  );
}

export function DecisionCard({ decision, level, collapsible = false, ...links }: DecisionCardProps) {
  const [open, setOpen] = useState(!collapsible);
  // Ids of its own: the same decision may be listed behind a dialog that shows it too.
  const baseId = useId();
  const headingId = `${baseId}-title`;
  const bodyId = `${baseId}-body`;
  const Heading = level === 2 ? "h2" : level === 3 ? "h3" : "h4";
  const superseded = decision.superseded_by !== null;
  return (
    <article class={superseded ? "decision-card is-superseded" : "decision-card"} aria-labelledby={headingId} data-decision-id={decision.id}>
      <Heading class="decision-title" id={headingId}>
        {collapsible ? (
          <button type="button" class="decision-toggle" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen((current) => !current)}>
            <svg class="chevron" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
              <path d="M6 3.5 10.5 8 6 12.5" />
            </svg>
            <span class="decision-text">{decision.decision}</span>
          </button>
        ) : (
          <span class="decision-text">{decision.decision}</span>
        )}
      </Heading>
      <DecisionSummary decision={decision} {...links} />
      <div id={bodyId} class="decision-body" hidden={!open}>
        {open && <DecisionDetails decision={decision} {...links} />}
      </div>
    </article>
  );
}

/** Who and when, the project, the task, the tags, and a superseded decision's successor. */
function DecisionSummary({ decision, known, taskTitles, currentTask, onOpenDecision }: { decision: Decision } & DecisionLinks) {
  const task = decision.task_id;
  return (
    <>
      <p class="decision-meta">
        <span>
          <span class="visually-hidden">Recorded by </span>
          <strong>{decision.agent_id}</strong>
        </span>
        <Time iso={decision.created_at} />
        <span>{decision.project ?? "global"}</span>
        {task !== null && task !== currentTask && (
          <span>
            task{" "}
            <a href={`#/tasks/${task}`} class="decision-task">
              {taskTitles?.get(task) ?? shortId(task)}
            </a>
          </span>
        )}
        {decision.superseded_by !== null && <Pill tone="superseded">superseded</Pill>}
      </p>
      {decision.tags.length > 0 && (
        <ul class="tags" aria-label="Tags">
          {decision.tags.map((tag) => (
            <li key={tag} class="tag">
              {tag}
            </li>
          ))}
        </ul>
      )}
      {decision.superseded_by !== null && (
        <p class="decision-superseded-note">
          Superseded by{" "}
          <DecisionLink id={decision.superseded_by} known={known} onOpen={onOpenDecision} />
        </p>
      )}
    </>
  );
}

/** The rationale, the alternatives, the memory it rests on, what it replaces, and its id. */
function DecisionDetails({ decision, known, onOpenEntry, onOpenDecision }: { decision: Decision } & DecisionLinks) {
  return (
    <div class="decision-details">
      <dl class="facts">
        <dt>Rationale</dt>
        <dd>
          <Rationale text={decision.rationale} />
        </dd>
        <dt>Alternatives</dt>
        <dd>
          {decision.alternatives.length === 0 ? (
            <span class="muted">none recorded</span>
          ) : (
            <ul class="decision-alternatives">
              {decision.alternatives.map((alternative, index) => (
                <li key={index}>
                  <span class="alt-option">{alternative.option}</span>{" "}
                  <span class="alt-reason">{alternative.reason_rejected === null ? "— no reason recorded" : `— rejected: ${alternative.reason_rejected}`}</span>
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Rests on</dt>
        <dd>
          {decision.memory_refs.length === 0 ? (
            <span class="muted">no memory entry</span>
          ) : (
            <ul class="inline-list" aria-label="Memory entries">
              {decision.memory_refs.map((ref) => (
                <li key={ref}>
                  <button type="button" class="link-button mono" onClick={() => onOpenEntry(ref)} aria-label={`Open entry ${shortId(ref)}`}>
                    entry {shortId(ref)}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </dd>
        {decision.supersedes !== null && (
          <>
            <dt>Replaces</dt>
            <dd>
              <DecisionLink id={decision.supersedes} known={known} onOpen={onOpenDecision} />
            </dd>
          </>
        )}
        <dt>Id</dt>
        <dd class="row-line">
          <span class="mono small">{decision.id}</span>
          <CopyButton text={decision.id} label="Copy id" />
        </dd>
      </dl>
    </div>
  );
}

const PREVIEW_LINES = 4;
const PREVIEW_CHARS = 320;

/** The first lines of a long text, cut at a word. */
function preview(text: string): string {
  let shown = text.split("\n").slice(0, PREVIEW_LINES).join("\n");
  if (shown.length > PREVIEW_CHARS) {
    const cut = shown.lastIndexOf(" ", PREVIEW_CHARS);
    shown = shown.slice(0, cut > PREVIEW_CHARS / 2 ? cut : PREVIEW_CHARS);
  }
  return `${shown.trimEnd().replace(/[.,;:]+$/, "")}…`;
}

/** The rationale, folded to its first lines when it is long. */
function Rationale({ text }: { text: string }) {
  const [whole, setWhole] = useState(false);
  const id = useId();
  if (text.trim() === "") return <span class="muted">none given</span>;
  const long = text.length > PREVIEW_CHARS || text.split("\n").length > PREVIEW_LINES;
  return (
    <div class="decision-rationale">
      <p class="decision-rationale-text" id={id}>
        {long && !whole ? preview(text) : text}
      </p>
      {long && (
        <button type="button" class="link-button small" aria-expanded={whole} aria-controls={id} onClick={() => setWhole((current) => !current)}>
          {whole ? "Show less" : "Show the whole rationale"}
        </button>
      )}
    </div>
  );
}
