// Small labels: memory types (directives get their own look), task states, roles.

import type { MemoryType } from "../../../src/wire/memory.js";

export function LockIcon() {
  return (
    <svg class="icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M4.5 7V5a3.5 3.5 0 0 1 7 0v2h.5a1 1 0 0 1 1 1v6a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V8a1 1 0 0 1 1-1h.5Zm1.5 0h4V5a2 2 0 0 0-4 0v2Z" />
    </svg>
  );
}

export function TypePill({ type }: { type: MemoryType }) {
  return (
    <span class={`pill pill-type pill-${type}`} data-type={type}>
      {type}
    </span>
  );
}

export function Pill({ children, tone = "neutral", title }: { children: string; tone?: string; title?: string }) {
  return (
    <span class={`pill pill-${tone}`} title={title}>
      {children}
    </span>
  );
}
