import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { itemEntry, itemKey, MAX_ITEM_KEY_CHARS, SUMMARY_MAX_CHARS } from "../../src/services/feeds/item-entry.js";
import type { FeedItem } from "../../src/services/feeds/parse.js";
import { markupResidue } from "../helpers/markup-residue.js";

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

const full: FeedItem = {
  guid: "urn:item:1",
  link: "https://example.com/posts/1",
  title: "Release 2.0",
  published: "2026-03-01T12:00:00Z",
  summaryHtml: "<p>What is <b>new</b>:</p><ul><li>speed</li><li>fixes</li></ul><script>track()</script>",
};

describe("itemEntry: the content CONTRACT §15 lays out", () => {
  it("writes the title as a heading, the date under it, the summary as plain text and the source", () => {
    expect(itemEntry(full, 65_536).content).toBe("## Release 2.0\n2026-03-01T12:00:00Z\n\nWhat is new:\n\n- speed\n- fixes\n\nSource: https://example.com/posts/1");
  });

  it.each<[string, FeedItem, string | null]>([
    ["no date: no date line", { title: "T", summaryHtml: "S", link: "https://example.com/" }, "## T\n\nS\n\nSource: https://example.com/"],
    ["an unreadable date: no date line", { title: "T", published: "soon", summaryHtml: "S" }, "## T\n\nS"],
    ["no title: no heading, the date opens the content", { published: "2026-03-01T12:00:00Z", summaryHtml: "S" }, "2026-03-01T12:00:00Z\n\nS"],
    ["no summary: heading and source only", { title: "T", link: "https://example.com/" }, "## T\n\nSource: https://example.com/"],
    ["a summary with no text: as if none", { title: "T", summaryHtml: "<script>x()</script><img src=x>" }, "## T"],
    ["no link: no source line", { title: "T", summaryHtml: "S" }, "## T\n\nS"],
    ["a link that is not http(s): no source line", { title: "T", link: "javascript:alert(1)" }, "## T"],
    ["only a link", { link: "https://example.com/" }, "Source: https://example.com/"],
    ["nothing to remember: no content", { guid: "g", published: "2026-03-01T12:00:00Z" }, null],
    ["a plain-text body", { title: "T", contentText: "x < y\n\n\n\nand <b> stays" }, "## T\n\nx < y\n\nand ＜b> stays"],
  ])("%s", (_case, item, content) => {
    const entry = itemEntry(item, 65_536);
    expect(entry.content).toBe(content);
    expect(entry.content ?? "").not.toMatch(/undefined|null/);
  });

  it("makes the title one line, and keeps it plain text even when handed one that is not", () => {
    // parseFeedDocument hands over titles already plain; a markup-like title stays inert text.
    expect(itemEntry({ title: "  Two\nlines & <b>bold</b> &amp;  " }, 65_536).content).toBe("## Two lines & ＜b>bold＜/b> ＆amp;");
  });

  it("keeps at most 2,000 characters of summary", () => {
    const content = itemEntry({ title: "T", summaryHtml: `<p>${"word ".repeat(2000)}</p>` }, 65_536).content ?? "";
    const summary = content.split("\n\n")[1] ?? "";
    expect(summary.length).toBe(SUMMARY_MAX_CHARS);
    expect(summary.endsWith("…")).toBe(true);
  });

  it("shortens the summary to keep the content within the server's content limit", () => {
    const item: FeedItem = { title: "T", link: "https://example.com/", summaryHtml: "é".repeat(2000) };
    const content = itemEntry(item, 1000).content ?? "";
    expect(Buffer.byteLength(content, "utf8")).toBeLessThanOrEqual(1000);
    expect(content.startsWith("## T\n\néé")).toBe(true);
    expect(content.endsWith("…\n\nSource: https://example.com/")).toBe(true);
  });

  it("cuts the content itself when even the title and source do not fit, never through a character", () => {
    const content = itemEntry({ title: "😀".repeat(100), link: "https://example.com/" }, 50).content ?? "";
    expect(Buffer.byteLength(content, "utf8")).toBeLessThanOrEqual(50);
    expect(content).toBe(`## ${"😀".repeat(11)}`);
  });

  it("leaves no markup, script URL or handler in the content of a hostile item", () => {
    const entry = itemEntry(
      {
        title: `<img src=x onerror=alert(1)>&lt;script&gt;`,
        link: "https://example.com/?q=<script>",
        summaryHtml: `<a href="javascript:alert(2)" onclick="x()">click</a>&amp;lt;iframe src=javascript:alert(3)&amp;gt;<svg onload=alert(4)>`,
      },
      65_536,
    );
    expect(markupResidue(entry.content ?? "")).toEqual([]);
    // The title is text (inert, shown); the summary's script URLs and handlers are gone entirely.
    expect(entry.content?.split("\n\n")[1]).toBe("click");
  });
});

describe("itemKey: how an item is recognised", () => {
  it("is the guid, else the link, else a hash of the title and date", () => {
    expect(itemKey(full)).toEqual({ key: "urn:item:1", kind: "guid" });
    const { guid: _guid, ...withoutGuid } = full;
    expect(itemKey(withoutGuid)).toEqual({ key: "https://example.com/posts/1", kind: "link" });
    const hashed = itemKey({ title: "T", published: "2026-03-01T12:00:00Z", summaryHtml: "S" });
    expect(hashed).toEqual({ key: sha256(JSON.stringify(["T", "2026-03-01T12:00:00Z"])), kind: "hash" });
  });

  it("hashes the same title and date the same way whatever the summary, and a new date differently", () => {
    const key = itemKey({ title: "T", published: "2026-03-01T12:00:00Z", summaryHtml: "one" }).key;
    expect(itemKey({ title: "T", published: "2026-03-01T12:00:00Z", summaryHtml: "two" }).key).toBe(key);
    expect(itemKey({ title: "T", published: "2026-03-02T12:00:00Z" }).key).not.toBe(key);
  });

  it("hashes the summary too when there is neither title nor date, so such items stay apart", () => {
    expect(itemKey({ summaryHtml: "one" }).key).not.toBe(itemKey({ summaryHtml: "two" }).key);
  });

  it("keeps a guid or link longer than 256 characters as its hash, with its kind", () => {
    const guid = `urn:${"x".repeat(300)}`;
    expect(itemKey({ guid })).toEqual({ key: sha256(guid), kind: "guid" });
    const link = `https://example.com/${"y".repeat(300)}`;
    expect(itemKey({ link })).toEqual({ key: sha256(link), kind: "link" });
    expect(itemKey({ guid: "g".repeat(MAX_ITEM_KEY_CHARS) }).key).toBe("g".repeat(MAX_ITEM_KEY_CHARS));
  });

  it("returns the key with the entry", () => {
    expect(itemEntry(full, 65_536)).toMatchObject({ key: "urn:item:1", kind: "guid" });
  });
});
