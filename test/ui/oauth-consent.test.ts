import { describe, expect } from "vitest";
import { describeInBrowser, screenshot } from "../helpers/browser.js";
import { authorizeUrl, OWNER_PASSWORD, pkce, register } from "../helpers/oauth.js";
import { it } from "../helpers/ui.js";

// The consent page in a real browser with JavaScript off (CONTRACT §19): signing in on the page,
// choosing the agent and allowing sends the browser to the client with the code, state and iss;
// signed in to the web UI already, the page comes straight up.

const REDIRECT = "http://127.0.0.1:59999/callback";

describeInBrowser("OAuth consent page", () => {
  describe("without JavaScript", () => {
    it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

    it("signs in, offers the agents, and on Allow sends the browser to the client with code, state and iss", async ({ server, browser }) => {
      await server.agent("frontend-bot");
      const client = await register(server.url, { client_name: "Claude Code (cairn)", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
      const url = authorizeUrl(server.url, { client_id: client.body.client_id as string, redirect_uri: REDIRECT, code_challenge: pkce().challenge, state: "in-browser" });
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 900, height: 900 } });
      try {
        const page = await context.newPage();
        let landed = "";
        await page.route("http://127.0.0.1:59999/**", async (route) => {
          landed = route.request().url();
          await route.fulfill({ status: 200, body: "the client got it" });
        });
        await page.goto(url);
        await page.getByLabel("Password").fill(OWNER_PASSWORD);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("button", { name: "Allow" }).waitFor();
        expect(await page.getByRole("radio", { name: /frontend-bot/ }).isChecked()).toBe(true);
        expect(await page.getByRole("radio", { name: server.owner.agentId }).count()).toBe(0);
        await screenshot(page, "oauth-consent");
        await page.getByRole("button", { name: "Allow" }).click();
        await page.waitForURL(/127\.0\.0\.1:59999/);
        const back = new URL(landed);
        expect(back.searchParams.get("code")).toMatch(/^cairn_ac_/);
        expect(back.searchParams.get("state")).toBe("in-browser");
        expect(back.searchParams.get("iss")).toBe(server.url);
        // Signed in now: the next authorization shows the consent page at once.
        await page.goto(url);
        await page.getByRole("button", { name: "Deny" }).click();
        await page.waitForURL(/error=access_denied/);
      } finally {
        await context.close();
      }
    });
  });
});
