import type { Notice } from "../context.js";

/** Short-lived messages about actions; errors are announced at once, successes politely. */
export function Notices({ notices, dismiss }: { notices: Notice[]; dismiss: (id: number) => void }) {
  return (
    <div class="notices" aria-live="polite">
      {notices.map((notice) => (
        <div key={notice.id} class={`notice notice-${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"}>
          <span class="notice-text">{notice.text}</span>
          <button type="button" class="icon-button" aria-label="Dismiss" onClick={() => dismiss(notice.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
