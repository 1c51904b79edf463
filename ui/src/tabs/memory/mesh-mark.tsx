// What a peer's copy says about where it came from (CONTRACT §16): the instance it was written on,
// which alone may change it, and for the owner a way to the link it came by in the Mesh view.

import { MeshIcon } from "../../components/mesh-icon.js";
import { useApp } from "../../context.js";
import type { MemoryEntry } from "../../../../src/wire/memory.js";

export function MeshMark({ entry }: { entry: Pick<MemoryEntry, "source"> }) {
  const { me } = useApp();
  const source = entry.source;
  if (source?.kind !== "mesh") return null;
  return (
    <p class="mesh-mark small" data-link-id={source.link_id} data-origin={source.origin}>
      <MeshIcon />
      <span>
        <span class="muted">from </span>
        {/* Only the owner has the Mesh view. */}
        {me.role === "owner" ? (
          <a href={`#/mesh/${source.link_id}`} class="mesh-mark-name" title={`The link to ${source.origin_name} in the Mesh view`}>
            {source.origin_name}
          </a>
        ) : (
          <strong class="mesh-mark-name">{source.origin_name}</strong>
        )}
        <span class="muted"> · a read-only copy: it changes only on {source.origin_name}</span>
      </span>
    </p>
  );
}
