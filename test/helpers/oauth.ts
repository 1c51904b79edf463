import { createHash, randomBytes } from "node:crypto";

// The human's side of the OAuth code flow, over plain HTTP as a browser would send it: signing in
// with the UI password, reading the consent page and answering its form.

/** The UI password the OAuth tests start their servers with. */
export const OWNER_PASSWORD = "correct horse battery staple";

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** A UI session (the cookie's value), signed in with the UI password. */
export async function signIn(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/ui/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: OWNER_PASSWORD }) });
  if (response.status !== 200) throw new Error(`ui login: ${response.status}`);
  return ((await response.json()) as { session: string }).session;
}

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
}

async function pageOf(response: Response): Promise<Page> {
  return { status: response.status, headers: response.headers, html: await response.text(), location: response.headers.get("location") };
}

/** GET of the authorization URL as a browser with (or without) the session cookie. */
export async function openAuthorize(url: string, session?: string): Promise<Page> {
  return pageOf(await fetch(url, { redirect: "manual", headers: session === undefined ? {} : { cookie: `cairn_ui_session=${encodeURIComponent(session)}` } }));
}

/** The hidden and named fields of the page's form, as the browser would send them back. */
function formFields(html: string): [string, string][] {
  const fields: [string, string][] = [];
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields.push([decodeEntities(match[1] as string), decodeEntities(match[2] as string)]);
  }
  return fields;
}

const decodeEntities = (text: string): string =>
  text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** The agent ids the consent page offers as radio buttons (`__new__` is the "new agent" choice). */
export const offeredAgents = (html: string): string[] => [...html.matchAll(/<input type="radio" name="agent" value="([^"]+)"/g)].map((match) => decodeEntities(match[1] as string));

export interface Decision {
  decision: "allow" | "deny";
  /** An agent id offered, or `{create}` for a new agent. */
  agent?: string | { create: string };
  /** Keep `cairn:write` ticked (default true). */
  write?: boolean;
  /** Override or drop fields (a missing CSRF token, another one). */
  tamper?: (fields: [string, string][]) => [string, string][];
  /** The Origin header the browser sends (default the server's own). */
  origin?: string | null;
}

/** Posts the consent page's form back with a decision; the answer is not followed. */
export async function decide(baseUrl: string, page: Page, session: string | undefined, decision: Decision): Promise<Page> {
  let fields = formFields(page.html);
  fields.push(["decision", decision.decision]);
  if (decision.agent !== undefined) {
    if (typeof decision.agent === "string") fields.push(["agent", decision.agent]);
    else fields.push(["agent", "__new__"], ["new_agent_id", decision.agent.create]);
  }
  if (decision.write ?? true) fields.push(["write", "on"]);
  if (decision.tamper) fields = decision.tamper(fields);
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (decision.origin !== null) headers.origin = decision.origin ?? baseUrl;
  if (session !== undefined) headers.cookie = `cairn_ui_session=${encodeURIComponent(session)}`;
  return pageOf(await fetch(`${baseUrl}/oauth/authorize`, { method: "POST", redirect: "manual", headers, body: new URLSearchParams(fields).toString() }));
}

/**
 * The whole human step: open the authorization URL signed in, and allow it as `agent`. Returns the
 * redirect the browser is sent to (with the code).
 */
export async function consent(baseUrl: string, authorizationUrl: string, session: string, decision: Omit<Decision, "decision"> = {}): Promise<URL> {
  const page = await openAuthorize(authorizationUrl, session);
  if (page.status !== 200) throw new Error(`authorize: ${page.status} ${page.location ?? page.html.slice(0, 300)}`);
  const answer = await decide(baseUrl, page, session, { decision: "allow", ...decision });
  if (answer.status !== 302 || answer.location === null) throw new Error(`consent: ${answer.status} ${answer.html.slice(0, 500)}`);
  return new URL(answer.location);
}

/** Registers a client as the body says; the parsed answer. */
export async function register(baseUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A form POST to the token (or revocation) endpoint. */
export async function tokenRequest(baseUrl: string, form: Record<string, string>, path = "/oauth/token", headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form).toString() });
  const text = await response.text();
  return { status: response.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** An authorization URL for a public client. */
export function authorizeUrl(baseUrl: string, params: Record<string, string>): string {
  return `${baseUrl}/oauth/authorize?${new URLSearchParams({ response_type: "code", code_challenge_method: "S256", ...params }).toString()}`;
}

export interface GrantRequest {
  /** The client's name, as it registers. */
  name: string;
  /** The agent the owner allows it to act as. */
  agent: string;
  /** Keep `cairn:write` ticked (default true). */
  write?: boolean;
  redirect?: string;
}

export interface Consented {
  clientId: string;
  redirect: string;
  code: string;
  verifier: string;
}

/**
 * A public client registered as `name`, allowed on the consent page by the owner (signed in with
 * the UI password) to act as `agent`: a grant, its code not redeemed yet.
 */
export async function consented(baseUrl: string, grant: GrantRequest): Promise<Consented> {
  const redirect = grant.redirect ?? "http://127.0.0.1:55001/callback";
  const client = await register(baseUrl, { client_name: grant.name, redirect_uris: [redirect], token_endpoint_auth_method: "none" });
  if (client.status !== 201) throw new Error(`register: ${client.status} ${JSON.stringify(client.body)}`);
  const clientId = client.body.client_id as string;
  const { verifier, challenge } = pkce();
  const url = authorizeUrl(baseUrl, { client_id: clientId, redirect_uri: redirect, code_challenge: challenge });
  const back = await consent(baseUrl, url, await signIn(baseUrl), { agent: grant.agent, write: grant.write ?? true });
  const code = back.searchParams.get("code");
  if (code === null) throw new Error(`consent: no code in ${back.toString()}`);
  return { clientId, redirect, code, verifier };
}

export interface Granted {
  clientId: string;
  access: string;
  refresh: string;
}

/** The same grant with its code redeemed: the client's first access and refresh tokens. */
export async function granted(baseUrl: string, grant: GrantRequest): Promise<Granted> {
  const { clientId, redirect, code, verifier } = await consented(baseUrl, grant);
  const tokens = await tokenRequest(baseUrl, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirect, client_id: clientId });
  if (tokens.status !== 200) throw new Error(`token: ${tokens.status} ${JSON.stringify(tokens.body)}`);
  return { clientId, access: tokens.body.access_token as string, refresh: tokens.body.refresh_token as string };
}
