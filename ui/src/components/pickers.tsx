// Selects for projects and agents, filled from the shared lists.

import { useApp } from "../context.js";
import { Field } from "./fields.js";

/** The value of the "global" option; any other non-empty value is a project id. */
export const GLOBAL = "\u0000global";

interface ProjectSelectProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** The label of the empty value ("any project", "my current project", …); none: no empty option. */
  emptyLabel?: string;
  withGlobal?: boolean;
}

export function ProjectSelect({ label, value, onChange, emptyLabel, withGlobal = true }: ProjectSelectProps) {
  const { projects } = useApp();
  return (
    <Field label={<>{label}</>}>
      <select value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {emptyLabel !== undefined && <option value="">{emptyLabel}</option>}
        {withGlobal && <option value={GLOBAL}>global (no project)</option>}
        {projects.map((project) => (
          <option key={project.id} value={project.id}>
            {project.name === project.id ? project.id : `${project.name} (${project.id})`}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** A ProjectSelect value as the API's `project`: undefined (omit), null (global) or an id. */
export function projectValue(value: string): string | null | undefined {
  if (value === "") return undefined;
  return value === GLOBAL ? null : value;
}

interface AgentSelectProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  emptyLabel?: string;
}

export function AgentSelect({ label, value, onChange, emptyLabel }: AgentSelectProps) {
  const { agents } = useApp();
  const known = agents.some((agent) => agent.agent_id === value);
  return (
    <Field label={<>{label}</>}>
      <select value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {emptyLabel !== undefined && <option value="">{emptyLabel}</option>}
        {value !== "" && !known && <option value={value}>{value}</option>}
        {agents.map((agent) => (
          <option key={agent.agent_id} value={agent.agent_id}>
            {agent.display_name ? `${agent.display_name} (${agent.agent_id})` : agent.agent_id}
          </option>
        ))}
      </select>
    </Field>
  );
}
