import { createHmac, timingSafeEqual } from "node:crypto";
import express, { type Request, type Response, type Router } from "express";
import { AppError } from "../core/errors.js";
import { ConsentProblem, OAuthError } from "../core/oauth-error.js";
import type { AgentChoice, Caller, CheckedAuthorization, OperationGateway } from "../../tools/gateway.js";
import { cookieSession } from "./credentials.js";
import { refuseCrossSite, type HostPolicy } from "./hosts.js";
import { consentPage, errorPage, signInPage, type CarriedParams } from "./oauth-pages.js";
import { COOKIE_MAX_AGE_S, sessionCookie } from "./ui.js";

/** The authorization request's parameters, carried from the first page through every form. */
const AUTHORIZATION_PARAMS = ["response_type", "client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method", "resource"] as const;
const FORM_BYTES = 64 * 1024;

// The pages are the human's: never framed (clickjacking the Allow button), never cached, never
// leaking the request by Referer. No form-action directive: browsers apply it to the redirect that
// follows the form, which goes to the client. Referrer-Policy same-origin, not no-referrer: under the
// latter a browser sends `Origin: null` with the form, which the origin check must refuse.
const PAGE_HEADERS = {
  "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
  Pragma: "no-cache",
  "Referrer-Policy": "same-origin",
  "X-Content-Type-Options": "nosniff",
};

function carried(source: Record<string, unknown>): CarriedParams {
  const params: CarriedParams = [];
  for (const name of AUTHORIZATION_PARAMS) {
    const value = source[name];
    for (const item of Array.isArray(value) ? value : [value]) if (typeof item === "string") params.push([name, item]);
  }
  return params;
}

const asRecord = (params: CarriedParams): Record<string, string | string[]> => {
  const record: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    const known = record[name];
    record[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
  }
  return record;
};

/**
 * The consent form's CSRF token: an HMAC of the request's parameters under the UI session itself.
 * Only the browser holding the session (an HttpOnly cookie) can have it, it fits only this request,
 * and any server sharing the database checks it without shared state.
 */
const csrfToken = (session: string, params: CarriedParams): string => createHmac("sha256", session).update(`cairn-oauth-consent\n${JSON.stringify(params)}`).digest("base64url");

function csrfMatches(session: string, params: CarriedParams, presented: unknown): boolean {
  if (typeof presented !== "string") return false;
  const expected = Buffer.from(csrfToken(session, params));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The token of a one-time login link, pasted whole (`…/ui/#login=…`) or alone. */
const loginToken = (pasted: string): string => {
  const trimmed = pasted.trim();
  const at = trimmed.indexOf("#login=");
  return at === -1 ? trimmed : trimmed.slice(at + "#login=".length);
};

/**
 * `GET /oauth/authorize` and the forms it shows (CONTRACT §19): the request is checked, the human
 * signs in (the UI session, or the password or a login link right here), sees who asks for what,
 * chooses the agent the client will act as, and allows or denies.
 */
export function authorizeRoutes(gateway: OperationGateway, hosts: HostPolicy): Router {
  const router = express.Router();
  const oauth = gateway.oauth;
  const secure = gateway.config.PUBLIC_URL.startsWith("https:");
  const form = express.urlencoded({ extended: false, limit: FORM_BYTES, parameterLimit: 50 });

  const show = (response: Response, status: number, html: string): void => {
    response.status(status).set(PAGE_HEADERS).type("html").send(html);
  };
  const refused = (response: Response, error: OAuthError): void => {
    if (error.redirect && error.location !== undefined) response.status(302).set(PAGE_HEADERS).location(error.location).end();
    else show(response, error.status === 401 ? 400 : error.status, errorPage("This request cannot be authorized", error.description));
  };
  /** The owner signed in with this browser, or null. */
  const signedIn = async (request: Request): Promise<{ session: string; caller: Caller } | null> => {
    const session = cookieSession(request);
    if (session === undefined) return null;
    try {
      const caller = await gateway.authenticate({ uiSession: session });
      return caller.role === "owner" ? { session, caller } : null;
    } catch (error) {
      if (error instanceof AppError && error.code === "UNAUTHENTICATED") return null;
      throw error;
    }
  };
  const continueUrl = (params: CarriedParams): string => `/oauth/authorize?${new URLSearchParams(params).toString()}`;
  const showConsent = async (response: Response, status: number, view: { request: CheckedAuthorization; params: CarriedParams; session: string; problem?: string; chosen?: string; newAgentId?: string }): Promise<void> => {
    const agents = await oauth.offeredAgents();
    const { session, ...rest } = view;
    show(response, status, consentPage({ ...rest, agents, csrf: csrfToken(session, view.params) }));
  };

  router.get("/oauth/authorize", async (request: Request, response: Response) => {
    const params = carried(request.query);
    let checked: CheckedAuthorization;
    try {
      checked = await oauth.checkAuthorization(request.query, request.socket.remoteAddress);
    } catch (error) {
      if (error instanceof OAuthError) return refused(response, error);
      throw error;
    }
    const owner = await signedIn(request);
    if (!owner) return show(response, 200, signInPage({ clientName: checked.client.name, passwordLogin: gateway.ui.passwordLogin, params, continueUrl: continueUrl(params) }));
    await showConsent(response, 200, { request: checked, params, session: owner.session });
  });

  router.post("/oauth/authorize", form, async (request: Request, response: Response) => {
    const body = (typeof request.body === "object" && request.body !== null ? request.body : {}) as Record<string, unknown>;
    try {
      // The cookie decides who answers: the form must come from this server's own page.
      refuseCrossSite(request, hosts);
    } catch (error) {
      if (error instanceof AppError) return show(response, 403, errorPage("Refused", "this form was not sent from Cairn's own page"));
      throw error;
    }
    const params = carried(body);
    let checked: CheckedAuthorization;
    try {
      checked = await oauth.checkAuthorization(asRecord(params), request.socket.remoteAddress);
    } catch (error) {
      if (error instanceof OAuthError) return refused(response, error);
      throw error;
    }

    if (body.action === "sign-in") {
      const password = typeof body.password === "string" && body.password !== "" ? body.password : undefined;
      const link = typeof body.login === "string" && body.login.trim() !== "" ? loginToken(body.login) : undefined;
      const again = (status: number, problem: string): void =>
        show(response, status, signInPage({ clientName: checked.client.name, passwordLogin: gateway.ui.passwordLogin, params, continueUrl: continueUrl(params), problem }));
      if (password === undefined && link === undefined) return again(400, "Enter the password or a login link.");
      try {
        const login = await gateway.ui.login(password !== undefined ? { password } : { token: link }, request.socket.remoteAddress);
        // See other: the consent page is shown by a GET, which a reload repeats harmlessly.
        response.status(303).set(PAGE_HEADERS).set("Set-Cookie", sessionCookie(login.session, COOKIE_MAX_AGE_S, secure)).location(continueUrl(params)).end();
      } catch (error) {
        if (error instanceof AppError && (error.code === "UNAUTHENTICATED" || error.code === "RATE_LIMITED")) return again(error.status, `Not signed in: ${error.detail}.`);
        throw error;
      }
      return;
    }

    const owner = await signedIn(request);
    if (!owner) return show(response, 401, errorPage("Not signed in", "Sign in to Cairn first: the decision was not taken."));
    if (!csrfMatches(owner.session, params, body.csrf)) return show(response, 403, errorPage("Refused", "this form is stale or was not made by Cairn for this request; start again from the application"));
    if (body.decision === "deny") return response.status(302).set(PAGE_HEADERS).location(oauth.denied(checked)).end();
    if (body.decision !== "allow") return show(response, 400, errorPage("No decision", "the form said neither allow nor deny"));
    const picked = typeof body.agent === "string" ? body.agent : "";
    const newAgentId = typeof body.new_agent_id === "string" ? body.new_agent_id.trim() : "";
    const choice: AgentChoice = picked === "__new__" ? { create: newAgentId } : { existing: picked };
    try {
      const location = await oauth.allow(owner.caller, checked, choice, body.write === "on");
      response.status(302).set(PAGE_HEADERS).location(location).end();
    } catch (error) {
      if (error instanceof ConsentProblem) return showConsent(response, 400, { request: checked, params, session: owner.session, problem: error.message, chosen: picked, newAgentId });
      throw error;
    }
  });
  return router;
}
