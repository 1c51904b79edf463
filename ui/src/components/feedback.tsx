// Loading, empty and error states, so that no panel is ever blank.

import type { ComponentChildren } from "preact";
import { errorText } from "../api.js";

export function ErrorNote({ error, onRetry, context }: { error: unknown; onRetry?: (() => void) | undefined; context?: string }) {
  return (
    <div class="error-note" role="alert">
      <span class="error-text">
        {context ? `${context}: ` : ""}
        {errorText(error)}
      </span>
      {onRetry && (
        <button type="button" class="link-button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}
