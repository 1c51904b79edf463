/** Three linked nodes: another Cairn, and the links between them. */
export function MeshIcon() {
  return (
    <svg class="icon mesh-icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M4.2 11.3 7 4.9M9 4.9l2.8 6.4M5.5 12.5h5" stroke="currentColor" stroke-width="1.4" fill="none" />
      <circle cx="8" cy="3.5" r="2.1" />
      <circle cx="3.5" cy="12.5" r="2.1" />
      <circle cx="12.5" cy="12.5" r="2.1" />
    </svg>
  );
}
