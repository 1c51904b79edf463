import { formatTime, relativeTime } from "../format.js";
import { useNow } from "../hooks.js";

/** A time shown relative to now ("5 min ago"), with the exact time on hover and for tools. */
export function Time({ iso }: { iso: string | null | undefined }) {
  const now = useNow();
  if (!iso) return <span class="muted">never</span>;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}
