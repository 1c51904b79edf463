import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";
import type { OAuthGrant as Grant } from "../../src/wire/oauth.js";
import { describeInBrowser, openPage, screenshot, type OpenPage } from "../helpers/browser.js";
import { withDatabase } from "../helpers/database.js";
import { consented, granted, OWNER_PASSWORD, tokenRequest } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";
import { signIn as signInAs, test } from "../helpers/ui.js";

// CONTRACT §19 in the web UI: the owner's Connected apps view lists the grants humans made on the
// consent page and revokes them, following oauth.grant.* events. Every grant is made by the real
// flow (registration, consent, code redeemed at the token endpoint).

const VIEWER = "reader-bot";
const ENV = { UI_PASSWORD: OWNER_PASSWORD, AGENT_KEYS: `${VIEWER}:${VIEWER}-key-0123456789:viewer` };


const signIn = (server: TestServer, opened: OpenPage, tab = "apps"): Promise<Page> => signInAs(opened.page, server.url, OWNER_PASSWORD, tab, '.live-status:has-text("Live")');

const grantsOf = async (server: TestServer): Promise<Grant[]> => {
  const response = await server.request<Grant[]>("/oauth/grants", { as: server.owner });
  expect(response.status, response.text).toBe(200);
  return response.body;
};

const grantOf = async (server: TestServer, clientId: string): Promise<Grant> => {
  const grant = (await grantsOf(server)).find((candidate) => candidate.client_id === clientId);
  expect(grant, `a grant for ${clientId}`).toBeDefined();
  return grant as Grant;
};

const row = (page: Page, id: string): Locator => page.locator(`.grant-table tr[data-grant-id="${id}"]`);
/** The text as shown (a line break is a space). */
const text = async (locator: Locator): Promise<string> => (await locator.innerText()).replace(/\s+/g, " ").trim();
const RECENTLY = String.raw`(just now|\d+ s ago)`;

/** What `/agents/me` over REST and an MCP `initialize` answer to the bearer token. */
async function bearerStatuses(server: TestServer, token: string): Promise<{ rest: number; mcp: number }> {
  const rest = await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${token}` } });
  await rest.body?.cancel();
  const mcp = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "grants-ui-test", version: "1" } } }),
  });
  await mcp.body?.cancel();
  return { rest: rest.status, mcp: mcp.status };
}

/** Console errors but the 401 before signing in. */
const unexpected = (errors: string[]) => errors.filter((error) => !/status of 401/.test(error));

function assertOnlyOwnOrigin(server: TestServer, opened: OpenPage): void {
  const origin = new URL(server.url).origin;
  expect(opened.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
}

describeInBrowser("Connected apps view", () => {
  test.override("serverEnv", ENV);

  test("lists every grant with its app, where it redirects, the agent it acts as, its scopes, when it was granted and last used, and no token", async ({ server, browser }) => {
    await server.agent("frontend-bot");
    const claude = await granted(server.url, { name: "Claude Code", agent: "frontend-bot", redirect: "http://127.0.0.1:33418/callback" });
    const cursor = await granted(server.url, { name: "Cursor", agent: VIEWER, write: false, redirect: "cursor://anysphere.cursor-mcp/oauth/callback" });
    // Allowed, its code not redeemed yet: never used.
    const waiting = await consented(server.url, { name: "VS Code", agent: "frontend-bot", redirect: "https://vscode.dev/redirect" });

    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Connected apps");
    expect(await page.locator('nav.tabs a[href="#/apps"][aria-current="page"]').textContent()).toBe("Connected apps");
    await expect.poll(() => page.locator(".grant-table tbody tr").count()).toBe(3);

    const claudeGrant = await grantOf(server, claude.clientId);
    const claudeRow = row(page, claudeGrant.id);
    expect(await text(claudeRow.locator(".grant-client"))).toBe("Claude Code");
    expect(await text(claudeRow.locator(".grant-host"))).toBe("redirects to 127.0.0.1:33418");
    expect(await text(claudeRow.locator(".grant-agent"))).toBe("frontend-bot");
    expect(await text(claudeRow.locator(".grant-scopes"))).toBe("cairn:read cairn:write");
    expect(await text(claudeRow.locator(".grant-created"))).toMatch(new RegExp(`^${RECENTLY} by ${server.owner.agentId}$`));
    expect(await claudeRow.locator(".grant-created time").getAttribute("datetime")).toBe(claudeGrant.created_at);
    expect(await text(claudeRow.locator(".grant-last-used"))).toMatch(new RegExp(`^${RECENTLY}$`));
    expect(await claudeRow.locator(".grant-last-used time").getAttribute("datetime")).toBe(claudeGrant.last_used_at);

    const cursorRow = row(page, (await grantOf(server, cursor.clientId)).id);
    expect(await text(cursorRow.locator(".grant-client"))).toBe("Cursor");
    expect(await text(cursorRow.locator(".grant-host"))).toBe("redirects to cursor://anysphere.cursor-mcp");
    // A viewer says so, and a token without cairn:write acts with a viewer's rights.
    expect(await text(cursorRow.locator(".grant-agent"))).toBe(`${VIEWER} viewer`);
    expect(await text(cursorRow.locator(".grant-scopes"))).toBe("cairn:read read only: a viewer's rights");

    const waitingRow = row(page, (await grantOf(server, waiting.clientId)).id);
    expect(await text(waitingRow.locator(".grant-host"))).toBe("redirects to vscode.dev");
    expect(await text(waitingRow.locator(".grant-last-used"))).toBe("never");
    expect(await waitingRow.getByRole("button", { name: "Revoke VS Code as frontend-bot" }).count()).toBe(1);

    const html = await page.content();
    for (const secret of [claude.access, claude.refresh, cursor.access, cursor.refresh, waiting.code, waiting.verifier]) expect(html).not.toContain(secret);
    assertOnlyOwnOrigin(server, opened);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("revokes a grant after a confirmation: its row goes, the API lists it no more, and its tokens are refused on /mcp and over REST", async ({ server, browser }) => {
    await server.agent("deploy-bot");
    const kept = await granted(server.url, { name: "Kept host", agent: "deploy-bot" });
    const gone = await granted(server.url, { name: "Gone host", agent: "deploy-bot" });
    expect(await bearerStatuses(server, gone.access)).toEqual({ rest: 200, mcp: 200 });
    const keptGrant = await grantOf(server, kept.clientId);
    const goneGrant = await grantOf(server, gone.clientId);

    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await row(page, goneGrant.id).waitFor();
    await row(page, keptGrant.id).waitFor();

    // Cancel changes nothing.
    await row(page, goneGrant.id).getByRole("button", { name: "Revoke Gone host as deploy-bot" }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke “Gone host”?" });
    await dialog.waitFor();
    expect(await text(dialog)).toContain("Gone host (127.0.0.1:55001) stops acting as deploy-bot at once");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect((await grantsOf(server)).map((grant) => grant.id).sort()).toEqual([keptGrant.id, goneGrant.id].sort());
    expect(await bearerStatuses(server, gone.access)).toEqual({ rest: 200, mcp: 200 });

    await row(page, goneGrant.id).getByRole("button", { name: "Revoke Gone host as deploy-bot" }).click();
    await dialog.getByRole("button", { name: "Revoke" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.locator(".notices").getByRole("status").filter({ hasText: "Revoked “Gone host”: it no longer acts as deploy-bot." }).waitFor();
    await row(page, goneGrant.id).waitFor({ state: "detached" });
    expect(await row(page, keptGrant.id).count()).toBe(1);

    expect((await grantsOf(server)).map((grant) => grant.id)).toEqual([keptGrant.id]);
    expect(await bearerStatuses(server, gone.access)).toEqual({ rest: 401, mcp: 401 });
    expect((await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: gone.refresh, client_id: gone.clientId })).body.error).toBe("invalid_grant");
    expect(await bearerStatuses(server, kept.access)).toEqual({ rest: 200, mcp: 200 });
    // The list read again still has only the one left.
    await page.reload();
    await row(page, keptGrant.id).waitFor();
    expect(await page.locator(".grant-table tbody tr").count()).toBe(1);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("shows a grant made while the page is open, and drops one revoked elsewhere, without a reload", async ({ server, browser }) => {
    await server.agent("live-bot");
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const empty = page.locator(".apps-section .empty");
    await empty.waitFor();
    expect(await text(empty)).toContain("No app is connected.");
    // It says which URL to give a client, as the server announces it.
    expect(await text(empty)).toContain(`${server.url}/mcp`);
    await page.evaluate("globalThis.cairnSamePage = true");

    const client = await granted(server.url, { name: "Late host", agent: "live-bot" });
    const grant = await grantOf(server, client.clientId);
    await row(page, grant.id).waitFor({ timeout: 10_000 });
    expect(await text(row(page, grant.id).locator(".grant-agent"))).toBe("live-bot");
    expect(await empty.count()).toBe(0);

    expect((await server.request(`/oauth/grants/${grant.id}`, { as: server.owner, method: "DELETE" })).status).toBe(204);
    await row(page, grant.id).waitFor({ state: "detached", timeout: 10_000 });
    await empty.waitFor();
    expect(await page.evaluate("globalThis.cairnSamePage")).toBe(true);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("shows no Connected apps view to a signed-in agent that is not the owner", async ({ server, browser }) => {
    await server.agent("other-bot");
    await granted(server.url, { name: "Someone's host", agent: "other-bot" });
    // No route makes the UI's identity anything but the owner: the test changes its role in the store.
    await withDatabase(server.dataDir, (db) => db.run("UPDATE agents SET role = 'agent' WHERE agent_id = ?", server.owner.agentId));
    expect((await server.request<{ role: string }>("/agents/me", { as: server.owner })).body.role).toBe("agent");
    expect((await server.request("/oauth/grants", { as: server.owner })).status).toBe(403);
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    // The address asked for the view; the Overview is shown, and no tab leads there.
    await page.locator('nav.tabs a[href="#/overview"][aria-current="page"]').waitFor();
    expect(await page.locator('nav.tabs a[href="#/apps"]').count()).toBe(0);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
    expect(await page.getByText("Someone's host").count()).toBe(0);
    expect(opened.requests.filter((url) => new URL(url).pathname.startsWith("/oauth/"))).toEqual([]);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });
});

describeInBrowser("Connected apps pictures", () => {
  test.override("serverEnv", ENV);

  test("captures the view with grants of three hosts, one read-only as a viewer and one never used, in light, dark and at 400 px, and the revoke confirmation", async ({ server, browser }) => {
    await server.agent("frontend-bot");
    await server.agent("release-manager");
    await granted(server.url, { name: "Claude Code", agent: "frontend-bot", redirect: "http://127.0.0.1:33418/callback" });
    await granted(server.url, { name: "Cursor", agent: VIEWER, write: false, redirect: "cursor://anysphere.cursor-mcp/oauth/callback" });
    await consented(server.url, { name: "Visual Studio Code", agent: "release-manager", redirect: "https://vscode.dev/redirect" });
    expect(await grantsOf(server)).toHaveLength(3);

    const shots: [prefix: string, options: Parameters<typeof openPage>[1]][] = [
      ["", {}],
      ["dark-", { colorScheme: "dark" }],
      ["narrow-", { viewport: { width: 400, height: 900 } }],
    ];
    for (const [prefix, options] of shots) {
      const opened = await openPage(browser, options);
      const page = await signIn(server, opened);
      const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      await expect.poll(() => page.locator(".grant-table tbody tr").count()).toBe(3);
      await page.locator(".apps-note .mono").waitFor();
      await page.evaluate("document.activeElement?.blur()");
      await page.mouse.move(0, 0);
      await page.waitForTimeout(300);
      await screenshot(page, `${prefix}oauth-grants`);
      expect(await sideways(), `${prefix}oauth-grants scrolls sideways`).toBeLessThanOrEqual(0);
      // At 1280 px every tab, this one included, is in sight: the owner's tab bar does not scroll.
      if (prefix !== "narrow-") expect(await page.evaluate<number>("(() => { const tabs = document.querySelector('nav.tabs'); return tabs.scrollWidth - tabs.clientWidth; })()")).toBeLessThanOrEqual(0);

      if (prefix === "") {
        await page.getByRole("button", { name: "Revoke Claude Code as frontend-bot" }).click();
        const dialog = page.getByRole("dialog", { name: "Revoke “Claude Code”?" });
        await dialog.waitFor();
        await page.evaluate("document.activeElement?.blur()");
        await screenshot(page, "oauth-grant-revoke");
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await dialog.waitFor({ state: "detached" });
      }
      expect(unexpected(opened.errors)).toEqual([]);
      await opened.context.close();
    }
  });
});
