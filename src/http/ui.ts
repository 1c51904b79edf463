import { existsSync } from "node:fs";
import { join } from "node:path";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { z } from "zod";
import { AppError, invalid } from "../core/errors.js";
import { uiDir } from "../core/paths.js";
import type { OperationGateway } from "../../tools/gateway.js";
import { jsonBody } from "./body.js";
import { cookieSession, SESSION_COOKIE } from "./credentials.js";
import { refuseCrossSite, type HostPolicy } from "./hosts.js";

/** The built UI (`npm run build` bundles ui/ into it). */
// The browser keeps the cookie a month; the server ends the session after 24 h without use.
export const COOKIE_MAX_AGE_S = 30 * 86400;

const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

const loginBody = z.union([
  z.strictObject({ password: z.string().min(1).max(1000) }),
  z.strictObject({ token: z.string().min(1).max(200) }),
]);

/** The UI's session cookie (the consent page signs in with it too). */
export function sessionCookie(value: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? "; Secure" : ""}`;
}

/**
 * The web UI: its static files under /ui/ (own files only, a strict CSP), login with the password
 * or the one-time token, and logout. Other routes accept the session through `credentialsOf`.
 */
export function uiRouter(gateway: OperationGateway, hosts: HostPolicy): Router {
  const router = express.Router();
  const sessions = gateway.ui;
  const secure = gateway.config.PUBLIC_URL.startsWith("https:");

  router.get("/", (_request, response) => response.redirect(302, "/ui/"));
  // Routing is not strict, so this route also sees /ui/: only the bare /ui is sent on.
  router.get("/ui", (request: Request, response: Response, next: NextFunction) => {
    if (request.path.endsWith("/")) next();
    else response.redirect(302, "/ui/");
  });
  router.get("/ui/config", (_request, response) => {
    response.set("Cache-Control", "no-store").json({ password_login: sessions.passwordLogin, agent_id: gateway.config.UI_AGENT_ID });
  });

  router.post("/ui/login", jsonBody(gateway.config.MAX_BODY_BYTES), async (request: Request, response: Response) => {
    const parsed = loginBody.safeParse(request.body);
    if (!parsed.success) throw invalid("", "expected {password} or {token}", "send a password or a login token");
    const login = await sessions.login(parsed.data, request.socket.remoteAddress);
    response.set("Cache-Control", "no-store").set("Set-Cookie", sessionCookie(login.session, COOKIE_MAX_AGE_S, secure)).json(login);
  });

  router.post("/ui/logout", async (request: Request, response: Response) => {
    const header = request.get("x-ui-session");
    const fromCookie = header === undefined ? cookieSession(request) : undefined;
    // Logging someone out from another site is a nuisance the origin check also prevents.
    if (fromCookie !== undefined) refuseCrossSite(request, hosts);
    const session = header ?? fromCookie;
    if (session) await sessions.logout(session);
    response.set("Set-Cookie", sessionCookie("", 0, secure)).status(204).end();
  });

  // No content hashes in the file names: the browser revalidates every file (Last-Modified) instead.
  router.get("/ui/{*file}", (request: Request, response: Response, next: NextFunction) => {
    response.set(SECURITY_HEADERS);
    if (!existsSync(join(uiDir, "index.html"))) {
      next(new AppError("UNAVAILABLE", "the web UI is not built: run npm run build"));
      return;
    }
    const parts = (request.params as { file?: string[] }).file ?? [];
    const file = parts.length === 0 ? "index.html" : parts.join("/");
    response.sendFile(file, { root: uiDir, dotfiles: "deny", cacheControl: true, maxAge: 0, lastModified: true }, (error?: Error) => {
      if (error && !response.headersSent) next(new AppError("NOT_FOUND", "route not found"));
    });
  });
  return router;
}
