import { describe, expect } from "vitest";
import { cliEnv, runCli } from "../helpers/cli.js";
import { withDatabase } from "../helpers/database.js";
import { it } from "../helpers/fixtures.js";
import type { ErrorBody, TestServer } from "../helpers/server.js";
import { UI_LOGIN_FAILURES_PER_MINUTE } from "../../src/services/throttle.js";

const PASSWORD = "correct horse battery staple";

interface Login {
  session: string;
  agent_id: string;
  expires_at: string;
}

const login = (server: TestServer, body: unknown, headers: Record<string, string> = {}) =>
  server.request<Login & ErrorBody>("/ui/login", { as: null, body, headers });

const cookieOf = (headers: Headers): string => (headers.get("set-cookie") ?? "").split(";")[0] ?? "";

describe("UI login with a password", () => {
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("gives a session for the UI agent, as a cookie the page cannot read and as a token", async ({ server }) => {
    const response = await login(server, { password: PASSWORD });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ agent_id: "human" });
    expect(response.body.session).toMatch(/^cairn_ui_[A-Za-z0-9_-]{43}$/);
    const setCookie = response.headers.get("set-cookie") ?? "";
    expect(setCookie).toContain(`cairn_ui_session=${response.body.session}`);
    for (const attribute of ["HttpOnly", "SameSite=Strict", "Path=/"]) expect(setCookie).toContain(attribute);
    expect(response.headers.get("cache-control")).toBe("no-store");

    const byCookie = await server.request<{ agent_id: string; role: string }>("/agents/me", { as: null, headers: { cookie: cookieOf(response.headers) } });
    expect(byCookie.status).toBe(200);
    expect(byCookie.body).toMatchObject({ agent_id: "human", role: "owner" });
    const byHeader = await server.request<{ agent_id: string }>("/agents/me", { as: null, headers: { "x-ui-session": response.body.session } });
    expect(byHeader.body.agent_id).toBe("human");
  });

  it("prints no link at start, but takes one from `cairn ui-link`", async ({ server }) => {
    expect(await server.server.uiUrl()).toBe(`${server.url}/ui/`);
    const { token } = await server.server.gateway.maintenance.issueLoginLink();
    const response = await login(server, { token });
    expect(response.status).toBe(200);
    expect(response.body.agent_id).toBe("human");
  });

  it("refuses a wrong password with a clear message, and says there is a password", async ({ server }) => {
    const response = await login(server, { password: "wrong" }, { "x-forwarded-for": "ignored" });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: "UNAUTHENTICATED", detail: "wrong password" });
    expect(response.headers.get("set-cookie")).toBeNull();
    expect((await server.request("/ui/config", { as: null })).body).toEqual({ password_login: true, agent_id: "human" });
    // No one-time token exists when a password is set.
    expect((await login(server, { token: "cairn_login_anything" })).status).toBe(401);
    expect(await server.server.uiUrl()).toBe(`${server.url}/ui/`);
  });

  it("ends a session at logout, for the cookie and the token alike", async ({ server }) => {
    const session = (await login(server, { password: PASSWORD })).body.session;
    const out = await server.request("/ui/logout", { as: null, method: "POST", headers: { "x-ui-session": session } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^cairn_ui_session=; .*Max-Age=0/);
    expect((await server.request<ErrorBody>("/agents/me", { as: null, headers: { "x-ui-session": session } })).status).toBe(401);
    expect((await server.request("/agents/me", { as: null, headers: { cookie: `cairn_ui_session=${session}` } })).status).toBe(401);
    expect((await server.request("/agents/me", { as: null, headers: { "x-ui-session": "cairn_ui_made-up" } })).status).toBe(401);
  });

  it("rejects a malformed body", async ({ server }) => {
    const response = await login(server, { password: PASSWORD, extra: 1 });
    expect(response.status).toBe(422);
  });

  it("allows five failed attempts a minute per address, then answers 429 until the minute is over", async ({ server }) => {
    for (let attempt = 0; attempt < UI_LOGIN_FAILURES_PER_MINUTE; attempt++) expect((await login(server, { password: `guess-${attempt}` })).status).toBe(401);
    const limited = await login(server, { password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Login links are counted apart: wrong passwords do not use up their allowance.
    const { token } = await server.server.gateway.maintenance.issueLoginLink();
    expect((await login(server, { token })).status).toBe(200);
  });
});

describe("UI login with the one-time link", () => {
  it("prints a link whose token logs in once", async ({ server }) => {
    const url = new URL(await server.server.uiUrl());
    expect(url.pathname).toBe("/ui/");
    const token = /^#login=(cairn_login_[A-Za-z0-9_-]+)$/.exec(url.hash)?.[1];
    expect(token).toBeDefined();
    expect((await server.request("/ui/config", { as: null })).body).toEqual({ password_login: false, agent_id: "human" });
    // No password works when none is configured.
    expect((await login(server, { password: "" })).status).toBe(422);
    expect((await login(server, { password: "anything" })).status).toBe(401);

    const first = await login(server, { token });
    expect(first.status).toBe(200);
    expect((await server.request<{ agent_id: string }>("/agents/me", { as: null, headers: { "x-ui-session": first.body.session } })).body.agent_id).toBe("human");
    const again = await login(server, { token });
    expect(again.status).toBe(401);
    expect(again.body.detail).toBe("this login link is not valid: a link works once, for 24 hours (`cairn ui-link` prints a new one)");
    expect(await server.server.uiUrl()).toBe(`${server.url}/ui/`);
  });

  it("takes a link minted by `cairn ui-link` on the running server, once, and none past its 24 hours", async ({ server }) => {
    // Never a synchronous child here: the server runs in this process, and a blocked event loop
    // would hold its transactions open while the child waits on their locks.
    const linked = await runCli(["ui-link"], cliEnv(server.dataDir, { PUBLIC_URL: server.url }));
    expect(linked.code, linked.stderr).toBe(0);
    const run = linked.stdout;
    const token = new RegExp(`^${server.url}/ui/#login=(cairn_login_[A-Za-z0-9_-]+)$`, "m").exec(run)?.[1];
    expect(token, run).toBeDefined();
    expect(run).toMatch(/works once, until \d{4}-\d\d-\d\dT/);
    expect((await login(server, { token })).status).toBe(200);
    expect((await login(server, { token })).status).toBe(401);

    const stale = (await server.server.gateway.maintenance.issueLoginLink()).token;
    await withDatabase(server.dataDir, (db) => db.run("UPDATE ui_login_links SET expires_at = '2000-01-01T00:00:00.000Z'"));
    expect((await login(server, { token: stale })).status).toBe(401);
    expect(await server.server.gateway.maintenance.pruneUiSessions()).toBeGreaterThanOrEqual(1);
    expect((await withDatabase(server.dataDir, (db) => db.get<{ n: number }>("SELECT count(*) AS n FROM ui_login_links")))?.n).toBe(0);
  });

  it("sends / and /ui to the UI, and serves its files with a strict policy", async ({ server }) => {
    for (const path of ["/", "/ui"]) {
      const response = await fetch(`${server.url}${path}`, { redirect: "manual" });
      expect(response.status).toBe(302);
      expect(response.headers.get("location")).toBe("/ui/");
    }
    const page = await fetch(`${server.url}/ui/`, { redirect: "manual" });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await page.text()).toMatch(/<script[^>]+src="[^"]*app\.js"/);
    const csp = page.headers.get("content-security-policy") ?? "";
    for (const rule of ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(rule);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const script = await fetch(`${server.url}/ui/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    // Nothing outside the built UI is reachable through it.
    for (const path of ["/ui/..%2Fpackage.json", "/ui/%2e%2e/%2e%2e/package.json", "/ui/.hidden", "/ui/missing.js"]) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
    }
  });
});
