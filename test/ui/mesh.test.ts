import type { Locator, Page } from "playwright-core";
import { createServer } from "node:net";
import { expect } from "vitest";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { describeInBrowser, openPage, screenshot, type OpenPage } from "../helpers/browser.js";
import { withDatabase } from "../helpers/database.js";
import { startTestServer, type Credentials, type TestServer } from "../helpers/server.js";
import { test as uiTest, signIn as signInAs, styleOf } from "../helpers/ui.js";

// CONTRACT §16 in the web UI: the owner's Mesh view (tokens shown once and revoked, links made
// through the dialog with the server's refusals explained, Sync now and its result, pause and
// resume, a failing link standing out, the discovered peers) and a peer's copy marked with its
// origin in the Memory tab. Every instance is a real server on loopback, linked by the real routes.

const PASSWORD = "mesh view password";

interface Token {
  id: string;
  label: string;
  prefix: string;
  token: string;
  revoked_at: string | null;
}

interface Link {
  id: string;
  peer_instance_id: string;
  peer_name: string;
  status: string;
  applied: number;
  cursor: number;
}

/** A peer that stops at most once: a test may stop it early to see its link fail. */
interface Peer extends TestServer {
  stopped: boolean;
  stop(): Promise<void>;
}

/** Another real server on loopback, named `name`, closed after the test unless it was stopped. */
async function startPeer(name: string): Promise<Peer> {
  const server = await startTestServer({ INSTANCE_NAME: name, MESH_SYNC_TICK_SECONDS: "60" });
  const peer: Peer = {
    ...server,
    stopped: false,
    async stop() {
      if (peer.stopped) return;
      peer.stopped = true;
      await server.close();
    },
  };
  return peer;
}

// Scheduled syncs at most once a minute, so what a test's Sync now brings is its own to show; gossip
// every second, so a peer a linked peer names is heard of at once.
const ENV = { UI_PASSWORD: PASSWORD, INSTANCE_NAME: "hq", MESH_SYNC_TICK_SECONDS: "60", MESH_GOSSIP_SECONDS: "1" };

// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
const test = uiTest.extend("laptop", async ({}, { onCleanup }) => {
  const peer = await startPeer("laptop");
  onCleanup(() => peer.stop());
  return peer;
});

async function project(server: TestServer, name: string): Promise<void> {
  const created = await server.request("/projects", { as: server.owner, body: { name } });
  expect([201, 409], created.text).toContain(created.status);
}

/** Agents registered so far, by server and id: a test writes as the same agent more than once. */
const registered = new WeakMap<TestServer, Map<string, Credentials>>();

async function agentOf(server: TestServer, agentId: string): Promise<Credentials> {
  const known = registered.get(server) ?? new Map<string, Credentials>();
  registered.set(server, known);
  const existing = known.get(agentId);
  if (existing) return existing;
  const agent = await server.agent(agentId);
  known.set(agentId, agent);
  return agent;
}

/** An agent of `server` that joined `projectId` and wrote `contents` there, shared with the project. */
async function written(server: TestServer, agentId: string, projectId: string, contents: readonly string[]): Promise<Entry[]> {
  const agent = await agentOf(server, agentId);
  expect((await server.request(`/projects/${projectId}/join`, { as: agent, body: {} })).status).toBeLessThan(300);
  const entries: Entry[] = [];
  for (const content of contents) {
    const response = await server.request<Entry>("/memory", { as: agent, body: { content, project: projectId, allow_duplicate: true } });
    expect(response.status, response.text).toBe(201);
    entries.push(response.body);
  }
  return entries;
}

/** A token `peer`'s owner minted for `projects`, as they would hand it over. */
async function minted(peer: TestServer, projects: readonly string[], label = "for hq"): Promise<Token> {
  for (const name of projects) await project(peer, name);
  const response = await peer.request<Token>("/mesh/tokens", { as: peer.owner, body: { label, projects, capabilities: ["pull", "handshake", "gossip"] } });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

/** `server` linked to `peer` by the owners, over REST: `peer`'s token, `server`'s POST /mesh/peers. */
async function linked(server: TestServer, peer: TestServer, projects: readonly string[], direction: "both" | "pull" = "both"): Promise<Link> {
  const token = await minted(peer, projects);
  for (const name of projects) await project(server, name);
  const response = await server.request<Link>("/mesh/peers", { as: server.owner, body: { url: peer.url, token: token.token, direction } });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

async function synced(server: TestServer, linkId: string): Promise<{ applied: number }> {
  const response = await server.request<{ applied: number }>(`/mesh/peers/${linkId}/sync`, { as: server.owner, method: "POST" });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** A loopback URL nothing listens on. */
async function closedPort(): Promise<string> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as { port: number };
  await new Promise((resolve) => listener.close(resolve));
  return `http://127.0.0.1:${port}`;
}

const signIn = async (server: TestServer, opened: OpenPage, tab: string): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, tab, '.live-status:has-text("Live")');

const linkCard = (page: Page, id: string): Locator => page.locator(`.link-card[data-link-id="${id}"]`);
const text = async (locator: Locator): Promise<string> => ((await locator.textContent()) ?? "").trim();

/** Changes the link's interval and confidence cap through its Settings dialog, and waits for it to close. */
async function saveSettings(page: Page, card: Locator, values: { interval: string; cap: string }): Promise<void> {
  await card.getByRole("button", { name: "Settings" }).click();
  const settings = page.getByRole("dialog", { name: "Link to laptop" });
  await settings.getByLabel("Sync every (seconds, 30 to 86400)").fill(values.interval);
  await settings.getByLabel("Copies' confidence cap (0 to 1)").fill(values.cap);
  await settings.getByRole("button", { name: "Save" }).click();
  await settings.waitFor({ state: "detached" });
}

/** Console errors but the 401 before signing in and the refusals a test provokes on purpose. */
const unexpected = (errors: string[], expected: number[] = []) =>
  errors.filter((error) => !/status of 401/.test(error) && !expected.some((status) => error.includes(`status of ${status}`)));

function assertOnlyOwnOrigin(server: TestServer, opened: OpenPage): void {
  const origin = new URL(server.url).origin;
  expect(opened.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
}

/** The little of the page's globals the callbacks below use (the Node-side program has no DOM types). */
interface ClipboardGlobals {
  navigator: { clipboard: { readText(): Promise<string> } };
}
interface FormValue {
  value: string;
}

describeInBrowser("Mesh view", () => {
  test.override("serverEnv", ENV);

  test("creates a token whose secret is shown once, lists it by its prefix only, and revokes it after a confirmation", async ({ server, browser }) => {
    await project(server, "payments");
    await project(server, "search");
    const opened = await openPage(browser);
    await opened.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const page = await signIn(server, opened, "mesh");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Mesh");
    const tokens = page.getByRole("region", { name: "Tokens" });
    await tokens.getByText("No token yet.").waitFor();

    await tokens.getByRole("button", { name: "New token" }).click();
    const form = page.getByRole("dialog", { name: "New mesh token" });
    await form.getByLabel("Label (for you: whom it is for)").fill("team B's laptop");
    await form.getByLabel("payments").check();
    // pull is always granted; handshake is offered by default, so the peer can link both ways.
    const pull = form.getByRole("checkbox", { name: /^pull:/ });
    expect(await pull.isChecked()).toBe(true);
    expect(await pull.isDisabled()).toBe(true);
    expect(await form.getByRole("checkbox", { name: /^handshake:/ }).isChecked()).toBe(true);
    await form.getByRole("checkbox", { name: /^gossip:/ }).check();
    await form.getByRole("button", { name: "Create token" }).click();

    const shown = page.getByRole("dialog", { name: "Token “team B's laptop” created" });
    await shown.waitFor();
    expect(await form.count()).toBe(0);
    expect(await shown.textContent()).toContain("This token is shown once: you will not see it again.");
    expect(await shown.textContent()).toContain(server.url);
    const secret = await shown.getByLabel("Mesh token").inputValue();
    expect(secret).toMatch(/^cairn_mt_[A-Za-z0-9_-]{16,}$/);
    // It is the token: a peer presenting it is answered.
    expect((await server.request("/mesh/gossip", { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    await shown.getByRole("button", { name: "Copy token" }).click();
    await shown.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as ClipboardGlobals).navigator.clipboard.readText())).toBe(secret);
    await shown.getByRole("button", { name: "Done" }).click();
    await shown.waitFor({ state: "detached" });

    const [listed] = (await server.request<Token[]>("/mesh/tokens", { as: server.owner })).body;
    expect(listed).toMatchObject({ label: "team B's laptop", projects: ["payments"], capabilities: ["pull", "handshake", "gossip"], revoked_at: null });
    const row = tokens.locator(`tr[data-token-id="${listed?.id}"]`);
    await row.waitFor();
    expect(await text(row.locator(".token-prefix"))).toBe(`${listed?.prefix}…`);
    expect(secret.startsWith(listed?.prefix ?? "?")).toBe(true);
    expect(await text(row.locator(".token-projects"))).toBe("payments");
    expect(await text(row.locator(".token-capabilities"))).toBe("handshake, gossip");
    expect(await text(row.locator(".token-state .pill"))).toBe("active");
    // Shown once: neither the text, the markup nor any field holds the secret any more.
    expect(await page.locator("body").innerText()).not.toContain(secret);
    expect(await page.content()).not.toContain(secret);
    const values = await page.locator("input, textarea").evaluateAll((fields: FormValue[]) => fields.map((field) => field.value));
    expect(values.filter((value) => value.includes(secret))).toEqual([]);
    // Its use above is shown once the list is read again (no event announces a use).
    await page.reload();
    await row.waitFor();
    expect(await text(row.locator(".token-last-used"))).toMatch(/ago$|^just now$/);

    // A token that reads nothing is refused before asking the server.
    await tokens.getByRole("button", { name: "New token" }).click();
    await form.getByLabel("Label (for you: whom it is for)").fill("nothing");
    await form.getByRole("button", { name: "Create token" }).click();
    await form.getByRole("alert").getByText("Choose at least one project").waitFor();
    await form.getByRole("button", { name: "Cancel" }).click();
    await form.waitFor({ state: "detached" });

    await row.getByRole("button", { name: "Revoke team B's laptop" }).click();
    const confirm = page.getByRole("dialog", { name: "Revoke “team B's laptop”?" });
    expect(await confirm.textContent()).toContain("turns unauthorized");
    await confirm.getByRole("button", { name: "Revoke" }).click();
    await confirm.waitFor({ state: "detached" });
    await expect.poll(() => row.getAttribute("data-state")).toBe("revoked");
    expect(await text(row.locator(".token-state .pill"))).toBe("revoked");
    expect(await row.getByRole("button", { name: /^Revoke/ }).count()).toBe(0);
    expect((await server.request("/mesh/gossip", { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
    assertOnlyOwnOrigin(server, opened);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("links a peer through the dialog, explaining the server's refusals, syncs now with the result shown, and pauses and resumes", async ({ server, laptop, browser }) => {
    const token = await minted(laptop, ["payments"]);
    await written(laptop, "alice", "payments", ["Refunds go through the payments queue, never straight to the gateway.", "The gateway retries a webhook for 3 days."]);
    await project(server, "payments");
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "mesh");
    const links = page.getByRole("region", { name: "Links" });
    await links.getByText("No peer linked yet.").waitFor();

    await links.getByRole("button", { name: "Link a peer" }).click();
    const dialog = page.getByRole("dialog", { name: "Link a peer" });
    const alert = dialog.getByRole("alert");
    const submit = dialog.getByRole("button", { name: "Link", exact: true });
    expect(await dialog.getByLabel(/^Both ways/).isChecked()).toBe(true);
    expect(await dialog.getByLabel("Sync every (seconds, 30 to 86400)").inputValue()).toBe("300");
    expect(await dialog.getByLabel("Copies' confidence cap (0 to 1)").inputValue()).toBe("0.8");

    // 422: the peer answers, but not to this token.
    await dialog.getByLabel("Peer URL (as this server reaches it)").fill(laptop.url);
    await dialog.getByLabel(/^Token from the peer's owner/).fill(`cairn_mt_${"A".repeat(43)}`);
    await submit.click();
    await alert.waitFor();
    expect(await alert.getAttribute("data-status")).toBe("422");
    expect(await text(alert.locator(".error-text"))).toBe("peer rejected the token");
    expect(await alert.textContent()).toContain("Ask the peer's owner for a new one.");

    // 502: nothing answers there.
    await dialog.getByLabel("Peer URL (as this server reaches it)").fill(await closedPort());
    await dialog.getByLabel(/^Token from the peer's owner/).fill(token.token);
    await submit.click();
    await expect.poll(() => alert.getAttribute("data-status")).toBe("502");
    expect(await alert.textContent()).toContain("The peer did not answer at this address.");
    expect((await server.request<Link[]>("/mesh/peers", { as: server.owner })).body).toEqual([]);

    // The right address, a mapping chosen by hand, pull and push both ways.
    await dialog.getByLabel("Peer URL (as this server reaches it)").fill(laptop.url);
    await dialog.getByRole("button", { name: "Choose projects instead" }).click();
    await dialog.getByLabel("Peer's project 1").fill("payments");
    await dialog.getByLabel("Lands in 1").selectOption("payments");
    await dialog.getByLabel("Label (optional)").fill("team B");
    await submit.click();
    await dialog.waitFor({ state: "detached" });
    await page.getByText("Linked laptop both ways").waitFor();

    const [link] = (await server.request<Link[]>("/mesh/peers", { as: server.owner })).body;
    expect(link).toMatchObject({ peer_name: "laptop", status: "active", projects: [{ remote: "payments", local: "payments" }], direction: "both", label: "team B" });
    const back = (await laptop.request<Link[]>("/mesh/peers", { as: laptop.owner })).body;
    expect(back.map((candidate) => candidate.peer_name)).toEqual(["hq"]);
    const card = linkCard(page, link?.id ?? "");
    await card.waitFor();
    expect(await text(card.getByRole("heading"))).toBe("laptop");
    expect(await text(card.locator(".pill"))).toBe("active");
    expect(await text(card.locator(".link-direction"))).toBe("linked both ways");
    expect(await card.locator(".link-url a").getAttribute("href")).toBe(laptop.url);
    expect(await card.locator(".link-projects .tag").allTextContents()).toEqual(["payments"]);
    expect(await text(card.locator(".link-settings"))).toBe("every 5 min, copies at most 80% confident");
    expect(await text(card.locator(".link-last-sync"))).toBe("never");
    // The token the link holds is never on the page: a hint of it only.
    expect(await page.content()).not.toContain(token.token);

    // 409: a second link to the same instance leads to the first.
    await links.getByRole("button", { name: "Link a peer" }).click();
    await dialog.getByLabel("Peer URL (as this server reaches it)").fill(laptop.url);
    await dialog.getByLabel(/^Token from the peer's owner/).fill(token.token);
    await submit.click();
    await expect.poll(() => alert.getAttribute("data-status")).toBe("409");
    expect(await text(alert.locator(".error-text"))).toBe("Already linked: this server has a link to that peer.");
    await dialog.getByRole("button", { name: "Show the link" }).click();
    await dialog.waitFor({ state: "detached" });
    await expect.poll(() => card.getAttribute("class")).toContain("is-target");
    expect(new URL(page.url()).hash).toBe(`#/mesh/${link?.id}`);

    // Sync now: what it did, on the card, and the card's counts after it.
    await card.getByRole("button", { name: "Sync now" }).click();
    const result = card.locator(".link-sync-result");
    await expect.poll(() => text(result), { timeout: 15_000 }).toMatch(/^2 applied \(1 page, [\d.]+ (B|KiB) in \d+ ms\)$/);
    await expect.poll(() => text(card.locator(".link-applied"))).toBe("2");
    expect(Number(await text(card.locator(".link-cursor")))).toBeGreaterThan(0);
    expect(await text(card.locator(".link-last-sync"))).toMatch(/ago$|^just now$/);
    expect(await text(card.locator(".link-last-success"))).toMatch(/ago$|^just now$/);
    const copies = (await server.request<Entry[]>("/memory?source_kind=mesh", { as: server.owner })).body;
    expect(copies.map((copy) => copy.agent_id)).toEqual(["alice@laptop", "alice@laptop"]);
    await card.getByRole("button", { name: "Sync now" }).click();
    await expect.poll(() => text(result)).toMatch(/^nothing new \(1 page, /);

    // Pause: the pill, the next sync and Sync now say so; Resume undoes it.
    const activePill = await styleOf(card.locator(".pill"), "backgroundColor");
    await card.getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => card.getAttribute("data-status")).toBe("paused");
    expect(await text(card.locator(".pill"))).toBe("paused");
    expect(await styleOf(card.locator(".pill"), "backgroundColor")).not.toBe(activePill);
    expect(await text(card.locator(".link-next-sync"))).toBe("paused");
    expect(await card.getByRole("button", { name: "Sync now" }).isDisabled()).toBe(true);
    expect((await server.request<Link[]>("/mesh/peers", { as: server.owner })).body[0]?.status).toBe("paused");
    await card.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => card.getAttribute("data-status")).toBe("active");
    expect(await card.getByRole("button", { name: "Sync now" }).isDisabled()).toBe(false);

    // Settings change what the card says; Unlink asks first, then the card goes.
    await saveSettings(page, card, { interval: "3600", cap: "0.6" });
    await expect.poll(() => text(card.locator(".link-settings"))).toBe("every hour, copies at most 60% confident");
    await card.getByRole("button", { name: "Unlink" }).click();
    const confirm = page.getByRole("dialog", { name: "Unlink laptop?" });
    expect(await confirm.textContent()).toContain("The copies it brought stay here, read-only");
    await confirm.getByRole("button", { name: "Unlink" }).click();
    await card.waitFor({ state: "detached" });
    expect((await server.request<Link[]>("/mesh/peers", { as: server.owner })).body).toEqual([]);
    assertOnlyOwnOrigin(server, opened);
    expect(unexpected(opened.errors, [409, 422, 502])).toEqual([]);
    await opened.context.close();
  });

  test("keeps a link's saved settings when a read of the links begun before the save answers after it", async ({ server, laptop, browser }) => {
    const link = await linked(server, laptop, ["payments"]);
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "mesh");
    const card = linkCard(page, link.id);
    await card.waitFor();
    expect(await text(card.locator(".link-settings"))).toBe("every 5 min, copies at most 80% confident");

    // The next read of the links is answered as it was when sent, but only after the save: a live
    // event's refresh sent just before a save and answered just after it, as on a busy server.
    let release = (): void => undefined;
    const saved = new Promise<void>((resolve) => (release = resolve));
    let sent = (): void => undefined;
    const held = new Promise<void>((resolve) => (sent = resolve));
    let holding = true;
    await page.route(/\/mesh\/peers(\?|$)/, async (route) => {
      if (!holding || route.request().method() !== "GET") return route.continue();
      holding = false;
      const response = await route.fetch();
      sent();
      await saved;
      return route.fulfill({ response });
    });
    // Paused elsewhere: its event has the page read the links again.
    expect((await server.request(`/mesh/peers/${link.id}`, { as: server.owner, method: "PATCH", body: { paused: true } })).status).toBe(200);
    await held;

    await saveSettings(page, card, { interval: "3600", cap: "0.6" });
    release();
    // A settings change sends no event, so nothing would read the links again for half a minute.
    await expect.poll(() => text(card.locator(".link-settings")), { timeout: 5_000 }).toBe("every hour, copies at most 60% confident");
    await page.waitForTimeout(1_000);
    expect(await text(card.locator(".link-settings"))).toBe("every hour, copies at most 60% confident");
    await expect.poll(() => card.getAttribute("data-status")).toBe("paused");
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("makes a failing link stand out: the peer stopped, Sync now shows the peer's failure on the card", async ({ server, laptop, browser }) => {
    const link = await linked(server, laptop, ["payments"]);
    const [note] = await written(laptop, "alice", "payments", ["Card numbers never leave the vault service."]);
    // This sync or a scheduled one before it brings the copy.
    await synced(server, link.id);
    expect((await server.request(`/memory/${note?.id}`, { as: server.owner })).status).toBe(200);
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "mesh");
    const card = linkCard(page, link.id);
    await card.waitFor();
    expect(await card.getAttribute("data-status")).toBe("active");
    expect(await card.locator(".link-error").count()).toBe(0);
    const healthy = { border: await styleOf(card, "borderLeftColor"), pill: await styleOf(card.locator(".pill"), "backgroundColor") };

    // Two failed syncs elsewhere: still active, with its last error (a failure that changes no status sends no event: read again).
    await laptop.stop();
    for (let attempt = 0; attempt < 2; attempt++) expect((await server.request(`/mesh/peers/${link.id}/sync`, { as: server.owner, method: "POST" })).status).toBe(502);
    await page.reload();
    await card.locator(".link-error-text").waitFor();
    expect(await card.getAttribute("data-status")).toBe("active");
    expect(await text(card.locator(".link-error"))).toMatch(/^Last error: \S/);

    // The third, asked for here, turns it failing.
    await card.getByRole("button", { name: "Sync now" }).click();
    const result = card.locator(".link-sync-result");
    await expect.poll(() => result.getAttribute("data-status"), { timeout: 15_000 }).toBe("502");
    expect(await text(result)).toMatch(/^Sync failed: \S/);
    await expect.poll(() => card.getAttribute("data-status")).toBe("failing");
    expect(await text(card.locator(".pill"))).toBe("failing");
    expect(await card.getAttribute("class")).toContain("is-failing");
    expect(await text(card.locator(".link-error"))).toMatch(/^Last error \(failing\): \S/);
    // Visibly unlike a healthy link, not only in words; its copies stay.
    expect(await styleOf(card, "borderLeftColor")).not.toBe(healthy.border);
    expect(await styleOf(card.locator(".pill"), "backgroundColor")).not.toBe(healthy.pill);
    expect(await text(card.locator(".link-applied"))).toBe("1");
    expect((await server.request<Entry[]>("/memory?source_kind=mesh", { as: server.owner })).body).toHaveLength(1);
    expect(unexpected(opened.errors, [502])).toEqual([]);
    await opened.context.close();
  });

  test("lists the peers heard of by gossip, none at first, and links one through the dialog at the address it was heard at", async ({ server, laptop, browser }) => {
    const design = await startPeer("design");
    try {
      const opened = await openPage(browser);
      const page = await signIn(server, opened, "mesh");
      const region = page.getByRole("region", { name: "Discovered peers" });
      await region.getByText("No peer heard of yet.").waitFor();
      expect((await server.request("/mesh/discovered", { as: server.owner })).body).toEqual([]);

      // hq pulls from laptop, and laptop from design in a project hq's token reaches: laptop's gossip names design.
      const toLaptop = await linked(server, laptop, ["payments"]);
      await linked(laptop, design, ["payments"], "pull");
      await expect
        .poll(async () => (await server.request<{ name: string }[]>("/mesh/discovered", { as: server.owner })).body.map((peer) => peer.name), { timeout: 20_000 })
        .toEqual(["design"]);
      const [heard] = (await server.request<{ instance_id: string; url: string; via: string; linked: boolean }[]>("/mesh/discovered", { as: server.owner })).body;
      expect(heard).toMatchObject({ url: design.url, via: `gossip:${toLaptop.peer_instance_id}`, linked: false });

      // Heard of without an event: read again.
      await page.reload();
      const row = region.locator(`tr[data-instance-id="${heard?.instance_id}"]`);
      await row.waitFor();
      expect(await text(row.locator("th"))).toBe("design");
      expect(await text(row.locator('[data-label="Address"]'))).toBe(design.url);
      expect(await text(row.locator('[data-label="Heard via"]'))).toBe("gossip from laptop");
      expect(await text(row.locator('[data-label="Last seen"]'))).toMatch(/ago$|^just now$/);

      // Link…: the dialog at the address it was heard at, a token from design's owner still needed.
      await row.getByRole("button", { name: "Link design" }).click();
      const dialog = page.getByRole("dialog", { name: "Link design" });
      const address = dialog.getByLabel("Peer URL (as this server reaches it)");
      expect(await address.inputValue()).toBe(design.url);
      expect(await address.getAttribute("readonly")).not.toBeNull();
      const token = await minted(design, ["payments"]);
      await dialog.getByLabel(/^Token from the peer's owner/).fill(token.token);
      await dialog.getByLabel(/^Pull only/).check();
      await dialog.getByRole("button", { name: "Link", exact: true }).click();
      await dialog.waitFor({ state: "detached" });
      await expect.poll(() => text(row.locator(".row-actions"))).toBe("linked");
      const links = (await server.request<(Link & { url: string; direction: string })[]>("/mesh/peers", { as: server.owner })).body;
      expect(links.find((link) => link.peer_name === "design")).toMatchObject({ url: design.url, direction: "pull", status: "active" });
      await page.locator(".link-card", { has: page.getByRole("heading", { name: "design", exact: true }) }).waitFor();
      assertOnlyOwnOrigin(server, opened);
      expect(unexpected(opened.errors)).toEqual([]);
      await opened.context.close();
    } finally {
      await design.stop();
    }
  });

  test("marks a peer's copy with its origin, offers no edit or delete on it, and suppresses it here after a confirmation", async ({ server, laptop, browser }) => {
    const link = await linked(server, laptop, ["payments"]);
    const [original] = await written(laptop, "alice", "payments", ["Settlement files arrive at 02:00 UTC; never reprocess one by hand."]);
    // This sync or a scheduled one before it brings the copy.
    await synced(server, link.id);
    expect((await server.request(`/memory/${original?.id}`, { as: server.owner })).status).toBe(200);
    const [own] = await written(server, "bob", "payments", ["Our own note: the refund worker runs every minute."]);
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "memory");

    const card = page.locator(`.memory-card[data-entry-id="${original?.id}"]`);
    await card.waitFor();
    expect(await card.getAttribute("data-source")).toBe("mesh");
    expect(await text(card.locator(".mesh-mark"))).toBe("from laptop · a read-only copy: it changes only on laptop");
    expect(await card.locator(".mesh-mark").getByRole("link", { name: "laptop" }).getAttribute("href")).toBe(`#/mesh/${link.id}`);
    expect(await text(card.locator('.card-meta [title="author"]'))).toBe("alice@laptop");
    expect(await card.getByRole("button", { name: "Edit" }).count()).toBe(0);
    expect(await card.getByRole("button", { name: "Delete" }).count()).toBe(0);
    expect(await card.getByRole("button", { name: "Suppress here" }).count()).toBe(1);
    // The server agrees: a copy changes only at its origin.
    expect((await server.request(`/memory/${original?.id}`, { as: server.owner, method: "PATCH", body: { content: "changed here" } })).status).toBe(403);
    const local = page.locator(`.memory-card[data-entry-id="${own?.id}"]`);
    expect(await local.locator(".mesh-mark").count()).toBe(0);
    expect(await local.getByRole("button", { name: "Edit" }).count()).toBe(1);
    expect(await local.getByRole("button", { name: "Suppress here" }).count()).toBe(0);

    // The Source filter: copies only.
    await page.locator(".filters").getByLabel("Source").selectOption({ label: "from peers (mesh)" });
    await local.waitFor({ state: "detached" });
    // The filtered list is read again: the copy is in it, alone.
    await card.waitFor();
    expect(await page.locator(".memory-card").count()).toBe(1);

    // The details say where it came from too.
    await card.getByRole("button", { name: "Details" }).click();
    const detail = page.getByRole("dialog", { name: `Entry ${original?.id.slice(0, 8)}` });
    await detail.locator(".mesh-mark").waitFor();
    expect(await detail.textContent()).toContain("Originlaptop");
    await page.keyboard.press("Escape");
    await detail.waitFor({ state: "detached" });

    // The origin leads to the link in the Mesh view.
    await card.locator(".mesh-mark").getByRole("link", { name: "laptop" }).click();
    await page.locator('nav.tabs a[href="#/mesh"][aria-current="page"]').waitFor();
    await expect.poll(() => linkCard(page, link.id).getAttribute("class")).toContain("is-target");

    // Suppress here: asked first, then gone here for everyone.
    await page.goto(`${server.url}/ui/#/memory`);
    await card.getByRole("button", { name: "Suppress here" }).click();
    const confirm = page.getByRole("dialog", { name: "Suppress this copy from laptop?" });
    expect(await confirm.textContent()).toContain("It stays on laptop");
    await confirm.getByRole("button", { name: "Suppress here" }).click();
    await confirm.waitFor({ state: "detached" });
    await card.waitFor({ state: "detached" });
    expect((await server.request(`/memory/${original?.id}`, { as: server.owner })).status).toBe(404);
    // Another sync does not bring it back at the same version.
    await synced(server, link.id);
    expect((await server.request<Entry[]>("/memory?source_kind=mesh", { as: server.owner })).body).toEqual([]);
    assertOnlyOwnOrigin(server, opened);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("shows no Mesh view to a signed-in agent that is not the owner", async ({ server, laptop, browser }) => {
    const link = await linked(server, laptop, ["payments"]);
    const [original] = await written(laptop, "alice", "payments", ["The ledger is append-only."]);
    await synced(server, link.id);
    // No route makes the UI's identity anything but the owner: the test changes its role in the store.
    await withDatabase(server.dataDir, (db) => db.run("UPDATE agents SET role = 'agent' WHERE agent_id = ?", server.owner.agentId));
    expect((await server.request<{ role: string }>("/agents/me", { as: server.owner })).body.role).toBe("agent");
    await server.request(`/projects/payments/join`, { as: server.owner, body: {} });
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "mesh");
    // The address asked for the Mesh view; the Overview is shown, and no tab leads there.
    await page.locator('nav.tabs a[href="#/overview"][aria-current="page"]').waitFor();
    expect(await page.locator('nav.tabs a[href="#/mesh"]').count()).toBe(0);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
    expect(opened.requests.filter((url) => new URL(url).pathname.startsWith("/mesh/"))).toEqual([]);

    // A copy is still marked, without the way to the Mesh view or Suppress.
    await page.locator('nav.tabs a[href="#/memory"]').click();
    const card = page.locator(`.memory-card[data-entry-id="${original?.id}"]`);
    await card.waitFor();
    expect(await text(card.locator(".mesh-mark .mesh-mark-name"))).toBe("laptop");
    expect(await card.locator(".mesh-mark a").count()).toBe(0);
    expect(await card.getByRole("button", { name: "Suppress here" }).count()).toBe(0);
    expect(await card.getByRole("button", { name: "Edit" }).count()).toBe(0);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });
});

describeInBrowser("Mesh pictures", () => {
  test.override("serverEnv", ENV);

  test("captures the Mesh view with an active, a failing and a paused link, a peer heard of, tokens, a new token, the link dialog and a copy in memory, in light, dark and at 400 px", async ({ server, laptop, browser }) => {
    const ci = await startPeer("ci-runner");
    const staging = await startPeer("staging");
    const design = await startPeer("design-team");
    try {
      await project(server, "payments");
      await project(server, "search");
      const laptopLink = await linked(server, laptop, ["payments", "search"]);
      await written(laptop, "alice", "payments", [
        "Refunds go through the payments queue, never straight to the gateway: the queue is what makes them idempotent.",
        "The gateway retries a webhook for 3 days; handlers must accept the same event twice.",
      ]);
      await written(laptop, "alice", "search", ["Reindexing takes 40 minutes on the full catalogue; run it after 22:00."]);
      await synced(server, laptopLink.id);
      const ciLink = await linked(server, ci, ["payments"], "pull");
      await written(ci, "build-bot", "payments", ["The payments suite needs the sandbox gateway on port 8443."]);
      await synced(server, ciLink.id);
      await ci.stop();
      for (let attempt = 0; attempt < 3; attempt++) expect((await server.request(`/mesh/peers/${ciLink.id}/sync`, { as: server.owner, method: "POST" })).status).toBe(502);
      const stagingLink = await linked(server, staging, ["search"]);
      await server.request(`/mesh/peers/${stagingLink.id}`, { as: server.owner, method: "PATCH", body: { paused: true, label: "until the release" } });
      const minted = await server.request<Token>("/mesh/tokens", { as: server.owner, body: { label: "design team's server", projects: ["search"], capabilities: ["pull", "gossip"], expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() } });
      expect(minted.status).toBe(201);
      const old = await server.request<Token>("/mesh/tokens", { as: server.owner, body: { label: "old CI token", projects: ["payments"] } });
      expect((await server.request(`/mesh/tokens/${old.body.id}`, { as: server.owner, method: "DELETE" })).status).toBe(204);
      const copy = (await server.request<Entry[]>("/memory?source_kind=mesh&project=payments", { as: server.owner })).body.find((entry) => entry.content.startsWith("Refunds go through"));
      expect(copy).toBeDefined();
      await written(server, "bob", "payments", ["The refund worker runs every minute and takes at most 50 refunds a run."]);
      await linked(laptop, design, ["search"], "pull");
      await expect.poll(async () => (await server.request<unknown[]>("/mesh/discovered", { as: server.owner })).body.length, { timeout: 20_000 }).toBe(1);

      const shots: [prefix: string, options: Parameters<typeof openPage>[1]][] = [
        ["", { viewport: { width: 1280, height: 1400 } }],
        ["dark-", { colorScheme: "dark", viewport: { width: 1280, height: 1400 } }],
        ["narrow-", { viewport: { width: 400, height: 900 } }],
      ];
      for (const [prefix, options] of shots) {
        const opened = await openPage(browser, options);
        const page = await signIn(server, opened, "mesh");
        const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
        await expect.poll(() => page.locator(".link-card").count(), { timeout: 10_000 }).toBe(3);
        await page.locator('.link-card[data-status="failing"]').waitFor();
        await page.locator(".token-table tbody tr").nth(3).waitFor();
        await page.locator(".discovered-table tbody tr").waitFor();
        await page.evaluate("document.activeElement?.blur()");
        await page.mouse.move(0, 0);
        await page.waitForTimeout(300);
        await screenshot(page, `${prefix}mesh`);
        expect(await sideways(), `${prefix}mesh scrolls sideways`).toBeLessThanOrEqual(0);

        await page.getByRole("button", { name: "Link a peer" }).click();
        const dialog = page.getByRole("dialog", { name: "Link a peer" });
        await dialog.getByLabel("Peer URL (as this server reaches it)").fill("https://cairn.design.example.com");
        await dialog.getByRole("button", { name: "Choose projects instead" }).click();
        await dialog.getByLabel("Peer's project 1").fill("design-system");
        await dialog.getByLabel("Lands in 1").selectOption("search");
        expect(await sideways(), `${prefix}link dialog scrolls sideways`).toBeLessThanOrEqual(0);
        if (prefix === "") await screenshot(page, "mesh-link-dialog");
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });

        if (prefix === "") {
          await page.getByRole("button", { name: "New token" }).click();
          const form = page.getByRole("dialog", { name: "New mesh token" });
          await form.getByLabel("Label (for you: whom it is for)").fill("team B's laptop");
          await form.getByLabel("payments").check();
          await form.getByRole("button", { name: "Create token" }).click();
          const shown = page.getByRole("dialog", { name: "Token “team B's laptop” created" });
          await shown.waitFor();
          await page.evaluate("document.activeElement?.blur()");
          await screenshot(page, "mesh-token-created");
          await shown.getByRole("button", { name: "Done" }).click();
          await shown.waitFor({ state: "detached" });
        }

        if (prefix === "") await page.setViewportSize({ width: 1280, height: 800 });
        await page.goto(`${server.url}/ui/#/memory`);
        await page.locator(".filters").getByLabel("Project").selectOption("payments");
        const card = page.locator(`.memory-card[data-entry-id="${copy?.id}"]`);
        await card.locator(".mesh-mark").waitFor({ timeout: 10_000 });
        await page.evaluate("document.activeElement?.blur()");
        await page.mouse.move(0, 0);
        await page.waitForTimeout(300);
        if (prefix === "") await screenshot(page, "memory-mesh-mark");
        expect(await sideways(), `${prefix}memory-mesh-mark scrolls sideways`).toBeLessThanOrEqual(0);
        expect(unexpected(opened.errors)).toEqual([]);
        await opened.context.close();
      }
    } finally {
      await Promise.all([ci.stop(), staging.stop(), design.stop()]);
    }
  });
});

