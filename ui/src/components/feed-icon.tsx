/** The usual feed symbol: a dot and two quarter rings. */
export function FeedIcon() {
  return (
    <svg class="icon feed-icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <circle cx="3.5" cy="12.5" r="1.75" />
      <path d="M2 6.5A7.5 7.5 0 0 1 9.5 14h-2A5.5 5.5 0 0 0 2 8.5Z" />
      <path d="M2 1.75A12.25 12.25 0 0 1 14.25 14h-2A10.25 10.25 0 0 0 2 3.75Z" />
    </svg>
  );
}
