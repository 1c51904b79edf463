import type { Locator, Page } from "playwright-core";
import { launchBrowser } from "./browser.js";
import { test as serverTest } from "./fixtures.js";

/**
 * `test` with the per-test `server` of ./fixtures.ts and a `browser` for the file: Chromium starts
 * once per file, and each test opens contexts of its own (`openPage`), so no cookie or storage
 * crosses from one test to another.
 */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
export const test = serverTest.extend("browser", { scope: "file" }, async ({}, { onCleanup }) => {
  const browser = await launchBrowser();
  onCleanup(() => browser.close());
  return browser;
});

/** The same `test`, for files whose tests read `it("…")`. */
export const it = test;

/**
 * Opens the UI at `tab` on `baseUrl`, signs in with the password and waits for `ready` (the shell's
 * header unless a tab needs more).
 */
export async function signIn(page: Page, baseUrl: string, password: string, tab = "overview", ready = ".app-header"): Promise<Page> {
  await page.goto(`${baseUrl}/ui/#/${tab}`);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator(ready).first().waitFor();
  return page;
}

/** The little of the DOM that page functions use (the Node-side program has no DOM types). */
interface StyledElement {
  ownerDocument: { defaultView: { getComputedStyle(element: unknown): Record<string, string> } };
}

/** An element's computed style property, e.g. `border-left-color`. */
export const styleOf = (locator: Locator, property: string): Promise<string> =>
  locator.evaluate((element: StyledElement, name: string) => element.ownerDocument.defaultView.getComputedStyle(element)[name] ?? "", property);

/**
 * Waits for `control` after an action, and fails with what the page showed instead (an error note)
 * and the answers of 400 or more it got, rather than with a bare timeout that says neither.
 */
export async function afterAction(scope: Locator, control: Locator, failures: readonly string[]): Promise<void> {
  const alert = scope.getByRole("alert");
  const answers = (): string => `failed answers: ${failures.join(", ") || "none"}`;
  try {
    await control.or(alert).first().waitFor();
  } catch (error) {
    throw new Error(`${control.toString()} did not appear; ${answers()}`, { cause: error });
  }
  if (await control.isVisible()) return;
  throw new Error(`the page showed an error instead of ${control.toString()}: ${(await alert.allTextContents()).join("; ")}; ${answers()}`);
}
