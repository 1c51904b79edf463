import type { Locator, Page } from "playwright-core";

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
