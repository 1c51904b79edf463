// What every tab may need: the signed-in agent, the agents and projects (for pickers and names),
// and a way to tell the user that something happened.

import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { AgentRecord, AgentSelf } from "../../src/wire/agents.js";
import type { Project } from "../../src/wire/projects.js";

export interface Notice {
  id: number;
  kind: "success" | "error";
  text: string;
}

export interface AppState {
  me: AgentSelf;
  agents: AgentRecord[];
  projects: Project[];
  /** Re-reads the signed-in agent, the agents and the projects. */
  refreshShared: () => void;
  notify: (kind: Notice["kind"], text: string) => void;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error("useApp outside the signed-in app");
  return state;
}
