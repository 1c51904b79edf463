import type { ComponentChildren, VNode } from "preact";
import type { MemoryEntry } from "../../../src/wire/memory.js";

/** Docs are written as Markdown, and so is a feed item's entry (`## <title>`, its date, its summary; CONTRACT §15). */
export const showsMarkdown = (entry: Pick<MemoryEntry, "type" | "source">): boolean => entry.type === "doc" || entry.source?.kind === "feed";

/**
 * The Markdown that synthesis docs and agents write — headings, lists, paragraphs, fenced code,
 * `code`, **bold**, *emphasis* and [links](https://…) — rendered as elements, never as HTML: text
 * is only ever text, so a note cannot inject markup, and a link goes nowhere but http(s).
 */
export function Markdown({ text, class: className }: { text: string; class?: string }): VNode {
  return <div class={className}>{blocks(text)}</div>;
}

const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const FENCE = /^\s*```/;

function blocks(text: string): VNode[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: VNode[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] as string;
    if (line.trim() === "") {
      index++;
      continue;
    }
    if (FENCE.test(line)) {
      const code: string[] = [];
      for (index++; index < lines.length && !FENCE.test(lines[index] as string); index++) code.push(lines[index] as string);
      index++;
      out.push(
        <pre key={out.length}>
          <code>{code.join("\n")}</code>
        </pre>,
      );
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      // Inside a card, a document's top heading is a small one.
      const level = Math.min(6, (heading[1] as string).length + 2);
      const Tag = `h${level}` as "h3";
      out.push(<Tag key={out.length}>{inline(heading[2] as string)}</Tag>);
      index++;
      continue;
    }
    for (const [pattern, List] of [
      [BULLET, "ul"],
      [NUMBERED, "ol"],
    ] as const) {
      if (!pattern.test(line)) continue;
      const items: string[] = [];
      while (index < lines.length && pattern.test(lines[index] as string)) items.push(pattern.exec(lines[index++] as string)?.[1] ?? "");
      out.push(
        <List key={out.length}>
          {items.map((item, at) => (
            <li key={at}>{inline(item)}</li>
          ))}
        </List>,
      );
    }
    if (index < lines.length && lines[index] === line) {
      const paragraph: string[] = [];
      while (index < lines.length) {
        const next = lines[index] as string;
        if (next.trim() === "" || FENCE.test(next) || HEADING.test(next) || BULLET.test(next) || NUMBERED.test(next)) break;
        paragraph.push(next.trim());
        index++;
      }
      out.push(<p key={out.length}>{inline(paragraph.join(" "))}</p>);
    }
  }
  return out;
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/;

function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let rest = text;
  while (rest) {
    const match = INLINE.exec(rest);
    if (!match) {
      out.push(rest);
      break;
    }
    if (match.index > 0) out.push(rest.slice(0, match.index));
    const [token] = match;
    if (match[1]) out.push(<code key={out.length}>{token.slice(1, -1)}</code>);
    else if (match[2]) out.push(<strong key={out.length}>{inline(token.slice(2, -2))}</strong>);
    else if (match[3]) out.push(<em key={out.length}>{inline(token.slice(1, -1))}</em>);
    else {
      const [, label = "", href = ""] = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(token) ?? [];
      out.push(
        /^https?:\/\//i.test(href) ? (
          <a key={out.length} href={href} target="_blank" rel="noopener noreferrer">
            {label}
          </a>
        ) : (
          label
        ),
      );
    }
    rest = rest.slice(match.index + token.length);
  }
  return out;
}
