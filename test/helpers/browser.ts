import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { describe } from "vitest";

/** Debian's Chromium; never a downloaded browser. (The variable lets a test run the suite as on a machine without it.) */
export const CHROMIUM = process.env.CAIRN_TEST_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"];

const SCREENSHOT_DIR = resolve(import.meta.dirname, "../ui/screenshots");
const VIEWPORT = { width: 1280, height: 800 };

/**
 * Browser tests need Debian's Chromium. Without it they are skipped (and said so once, with the
 * command that installs it: test/global-setup.ts), except in CI, whose run installs it and where a
 * missing browser must fail rather than pass quietly.
 */
export const HAS_CHROMIUM = existsSync(CHROMIUM);
export const INSTALL_CHROMIUM = "sudo apt-get install chromium";
export const describeInBrowser: typeof describe = HAS_CHROMIUM || process.env.CI ? describe : (describe.skip as typeof describe);

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

export interface OpenPage {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested, to show that nothing leaves loopback. */
  requests: string[];
  /** Console errors and uncaught page errors: a UI that throws fails its test. */
  errors: string[];
  /** `METHOD path → status` of every answer of 400 or more, for a failing test to say what went wrong. */
  failures: string[];
}

/** A fresh context (own cookies) with one page at 1280×800, recording requests and errors. */
export async function openPage(browser: Browser, options: { colorScheme?: "light" | "dark"; viewport?: { width: number; height: number } } = {}): Promise<OpenPage> {
  const context = await browser.newContext({ viewport: options.viewport ?? VIEWPORT, colorScheme: options.colorScheme ?? "light" });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  const failures: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("response", (response) => {
    if (response.status() >= 400) failures.push(`${response.request().method()} ${new URL(response.url()).pathname} → ${response.status()}`);
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  return { context, page, requests, errors, failures };
}

/** Saves a screenshot under test/ui/screenshots/ (kept out of git; docs/screenshots/ holds the current set). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}
