// One blueprint in the list: its title, name, current version and size; opened, its parameters,
// its versions (newest first, each one's plan on request) and the chosen version's plan as a picture.

import { useId, useState } from "preact/hooks";
import { api, encode, query } from "../../api.js";
import { ErrorNote, Loading } from "../../components/feedback.js";
import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { plural } from "../../format.js";
import { useLoad } from "../../hooks.js";
import type { Blueprint, BlueprintDocument } from "../../../../src/wire/blueprints.js";
import { PlanPicture } from "./plan-picture.js";
import { asDocument, previewNodes } from "./plan-model.js";

interface BlueprintCardProps {
  blueprint: Blueprint;
  /** Narrows the runs to this blueprint's. */
  onShowRuns: (name: string) => void;
}

export function BlueprintCard({ blueprint, onShowRuns }: BlueprintCardProps) {
  const [open, setOpen] = useState(false);
  const baseId = useId();
  const plan = asDocument(blueprint.document);
  return (
    <article class="blueprint-card" aria-labelledby={`${baseId}-title`} data-blueprint={blueprint.name}>
      <h3 class="blueprint-heading" id={`${baseId}-title`}>
        <button type="button" class="decision-toggle blueprint-toggle" aria-expanded={open} aria-controls={`${baseId}-body`} onClick={() => setOpen((current) => !current)}>
          <svg class="chevron" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
            <path d="M6 3.5 10.5 8 6 12.5" />
          </svg>
          <span class="blueprint-title">{plan?.title ?? blueprint.name}</span>
        </button>
      </h3>
      <p class="blueprint-meta small">
        <span class="mono blueprint-name">{blueprint.name}</span>
        <Pill tone="version" title="current version">{`v${blueprint.version}`}</Pill>
        <span>{blueprint.project ?? "global"}</span>
        <span>{plural(blueprint.node_count, "node")}</span>
        <span>
          saved by {blueprint.created_by} <Time iso={blueprint.created_at} />
        </span>
        <button type="button" class="link-button" onClick={() => onShowRuns(blueprint.name)}>
          Show its runs
        </button>
      </p>
      {plan?.description && <p class="blueprint-description">{plan.description}</p>}
      <div id={`${baseId}-body`} class="blueprint-body" hidden={!open}>
        {open && <BlueprintVersions blueprint={blueprint} />}
      </div>
    </article>
  );
}

function BlueprintVersions({ blueprint }: { blueprint: Blueprint }) {
  const versions = useLoad(
    async () => (await api.get<Blueprint[]>(`/blueprints/${encode(blueprint.name)}` + query({ project: blueprint.project }))).data,
    [blueprint.name, blueprint.project, blueprint.version],
  );
  const [chosen, setChosen] = useState(blueprint.version);
  const list = versions.data ?? [blueprint];
  const shown = list.find((version) => version.version === chosen) ?? blueprint;
  const plan = asDocument(shown.document);
  return (
    <div class="stack">
      {plan && <Params plan={plan} />}
      <section class="blueprint-versions" aria-label="Versions">
        <h4 class="subheading">Versions</h4>
        {versions.loading && !versions.data && <Loading label="Loading its versions…" />}
        {versions.error !== undefined && <ErrorNote error={versions.error} context="Could not load its versions" onRetry={versions.reload} />}
        <ol class="version-list">
          {list.map((version) => (
            <li key={version.id} class="row-line">
              <button type="button" class="version-button" aria-pressed={version.version === chosen} onClick={() => setChosen(version.version)} aria-label={`Show the plan of version ${version.version}`}>
                v{version.version}
              </button>
              <span class="small">
                {plural(version.node_count, "node")} · saved by {version.created_by} <Time iso={version.created_at} />
                {version.version === blueprint.version && <span class="muted"> · current</span>}
              </span>
            </li>
          ))}
        </ol>
      </section>
      {plan ? (
        <section class="blueprint-plan" aria-label={`Plan of version ${shown.version}`}>
          <h4 class="subheading">Plan of v{shown.version}</h4>
          <PlanPicture nodes={previewNodes(plan)} title={`Plan of ${blueprint.name} v${shown.version}: ${plural(plan.nodes.length, "node")}`} />
        </section>
      ) : (
        <p class="muted">This version's document has no nodes to draw.</p>
      )}
    </div>
  );
}

function Params({ plan }: { plan: BlueprintDocument }) {
  return (
    <section aria-label="Parameters">
      <h4 class="subheading">Parameters</h4>
      {plan.params.length === 0 ? (
        <p class="muted small">none</p>
      ) : (
        <ul class="plain-list param-list">
          {plan.params.map((param) => (
            <li key={param.name} class="small">
              <span class="mono">{param.name}</span> <span class="muted">{param.type}</span>
              {param.required && <span class="muted"> · required</span>}
              {param.default !== undefined && <span class="muted"> · default {JSON.stringify(param.default)}</span>}
              {param.enum && <span class="muted"> · one of {param.enum.map((value) => JSON.stringify(value)).join(", ")}</span>}
              {param.description && <span> — {param.description}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
