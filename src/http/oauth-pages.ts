import type { CheckedAuthorization, OfferedAgent } from "../../tools/gateway.js";

// The pages of the authorization endpoint: server-rendered HTML that works without JavaScript and
// wears the web UI's stylesheet. Every value from a request or a client is escaped; nothing here
// runs a script.

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string);

const SCOPE_TEXT: Record<string, string> = {
  "cairn:read": "read what the agent can see: memory, tasks, messages, events",
  "cairn:write": "make changes as the agent: write memory, take and complete tasks, send messages",
};

/** The parameters of the authorization request, carried through the forms unchanged. */
export type CarriedParams = [name: string, value: string][];

const hidden = (params: CarriedParams): string => params.map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`).join("\n");

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} · Cairn</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/styles.css">
</head>
<body>
<main class="login" id="main">
<div class="login-card">
<h1 class="brand-title"><span class="brand-mark" aria-hidden="true"></span>Cairn</h1>
${body}
</div>
</main>
</body>
</html>
`;
}

const note = (message: string | undefined): string => (message === undefined ? "" : `<p class="error-note" role="alert">${escapeHtml(message)}</p>`);

/** A request that cannot go back to the client (an unknown client, a redirect URI not registered). */
export function errorPage(title: string, message: string): string {
  return page(title, `<h2>${escapeHtml(title)}</h2>\n<p>${escapeHtml(message)}</p>\n<p>Nothing was sent back to the application. Close this page and start again from it.</p>`);
}

/** Signing in first: the UI password when there is one, or a one-time login link or token. */
export function signInPage(options: { clientName: string; passwordLogin: boolean; params: CarriedParams; continueUrl: string; problem?: string }): string {
  const password = options.passwordLogin
    ? `<div class="field"><label class="field-label" for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" autofocus></div>`
    : "";
  return page(
    "Sign in",
    `<h2>Sign in to let ${escapeHtml(options.clientName)} connect</h2>
${note(options.problem)}
<form method="post" action="/oauth/authorize" class="stack">
${hidden(options.params)}
<input type="hidden" name="action" value="sign-in">
${password}
<div class="field"><label class="field-label" for="login">${options.passwordLogin ? "Or a" : "A"} one-time login link (printed by <code>cairn serve</code>, or <code>npx cairn ui-link</code>)</label><input type="text" id="login" name="login" autocomplete="off" spellcheck="false"></div>
<button type="submit" class="primary">Sign in</button>
</form>
<p>Signed in to Cairn in this browser already? <a href="${escapeHtml(options.continueUrl)}">Continue</a>.</p>`,
  );
}

export interface ConsentView {
  request: CheckedAuthorization;
  agents: OfferedAgent[];
  params: CarriedParams;
  csrf: string;
  problem?: string;
  /** What the human chose before the page came back with a problem. */
  chosen?: string;
  newAgentId?: string;
}

/**
 * The consent page: who asks (the client's name, unverified, and its host), what for (the
 * scopes), and as whom (an agent or viewer the human picks, or a new agent). Allow or deny.
 */
export function consentPage(view: ConsentView): string {
  const { request } = view;
  const chosen = view.chosen ?? view.agents[0]?.agentId ?? "__new__";
  const agentRows = view.agents
    .map(
      (agent) =>
        `<label class="check"><input type="radio" name="agent" value="${escapeHtml(agent.agentId)}"${chosen === agent.agentId ? " checked" : ""}> <span><strong>${escapeHtml(agent.agentId)}</strong>${agent.displayName ? ` (${escapeHtml(agent.displayName)})` : ""}${agent.role === "viewer" ? " · viewer, read only" : ""}</span></label>`,
    )
    .join("\n");
  const newAgent = `<label class="check"><input type="radio" name="agent" value="__new__"${chosen === "__new__" ? " checked" : ""}> <span>A new agent:</span></label>
<div class="field"><label class="field-label" for="new_agent_id">New agent id</label><input type="text" id="new_agent_id" name="new_agent_id" value="${escapeHtml(view.newAgentId ?? "")}" pattern="[a-z0-9][a-z0-9_\\-]{0,63}" autocomplete="off" spellcheck="false"></div>`;
  const scopes = request.scopes
    .map((scope) =>
      scope === "cairn:write"
        ? `<label class="check"><input type="checkbox" name="write" value="on" checked> <span><code>cairn:write</code>: ${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</span></label>`
        : `<p class="check"><span><code>${escapeHtml(scope)}</code>: ${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</span></p>`,
    )
    .join("\n");
  return page(
    "Allow access",
    `<h2>${escapeHtml(request.client.name)} wants to use this Cairn</h2>
<p>The application names itself <strong>${escapeHtml(request.client.name)}</strong> (a name it chose; Cairn cannot check it). Its answer goes to <strong>${escapeHtml(request.clientHost)}</strong>.</p>
${note(view.problem)}
<form method="post" action="/oauth/authorize" class="stack">
${hidden(view.params)}
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<fieldset class="checks"><legend>It may</legend>
${scopes}
</fieldset>
<fieldset class="checks"><legend>Acting as</legend>
${agentRows}
${newAgent}
</fieldset>
<div class="form-actions">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
}
