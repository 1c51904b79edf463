// Logging in and out of the UI (the server's /ui routes; the session lives in an HttpOnly cookie).

import { ApiError, api, request } from "./api.js";
import type { AgentSelf } from "../../src/wire/agents.js";
import type { UiConfig, UiLogin } from "../../src/wire/ui-session.js";

export const loadConfig = async (): Promise<UiConfig> => (await api.get<UiConfig>("/ui/config", { endsSession: false })).data;

export async function login(credentials: { password: string } | { token: string }): Promise<UiLogin> {
  const response = await request<UiLogin>("/ui/login", { method: "POST", body: credentials, endsSession: false });
  return response.data;
}

export async function logout(): Promise<void> {
  await request("/ui/logout", { method: "POST", endsSession: false });
}

/** The signed-in agent, or undefined when there is no session (401). */
export async function currentAgent(): Promise<AgentSelf | undefined> {
  try {
    return (await api.get<AgentSelf>("/agents/me", { endsSession: false })).data;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return undefined;
    throw error;
  }
}

/** The one-time login token in `#login=<token>`, if the page was opened with one. */
export function loginTokenFromHash(hash: string): string | undefined {
  const match = /(?:^#|&)login=([^&]+)/.exec(hash);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}
