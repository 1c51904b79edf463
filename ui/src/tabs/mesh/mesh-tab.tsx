// The Mesh view (CONTRACT §16), the owner's alone: the links to peers this server pulls from, with
// their health and Sync now; peers heard of, to link; and the tokens this server grants peers.
// Every list follows the mesh events, which only owners receive.

import { useEffect, useMemo, useState } from "preact/hooks";
import { api, encode, query } from "../../api.js";
import { ConfirmDialog } from "../../components/dialog.js";
import { PagedList } from "../../components/paged-list.js";
import { useApp } from "../../context.js";
import { useLiveRefresh, useLoad, usePaged } from "../../hooks.js";
import type { MeshDiscovered, MeshGossip, MeshLink, MeshToken } from "../../../../src/wire/mesh.js";
import { DiscoveredSection } from "./discovered.js";
import { LinkCard } from "./link-card.js";
import { LinkDialog } from "./link-dialog.js";
import { LinkSettingsDialog } from "./link-settings.js";
import { TokensSection } from "./tokens.js";

/** The link `#/mesh/<id>` points at (an origin mark on a copy leads there), if any. */
const targetFromHash = (): string | undefined => /^#\/?mesh\/([0-9a-f-]{36})/i.exec(location.hash)?.[1];

type LinkTarget = { kind: "new" } | { kind: "discovered"; peer: MeshDiscovered };

export function MeshTab() {
  const { notify } = useApp();
  const [linking, setLinking] = useState<LinkTarget | undefined>(undefined);
  const [editing, setEditing] = useState<MeshLink | undefined>(undefined);
  const [unlinking, setUnlinking] = useState<MeshLink | undefined>(undefined);
  const [target, setTarget] = useState(targetFromHash);

  const self = useLoad(async () => (await api.get<MeshGossip>("/mesh/gossip")).data, []);
  const links = usePaged<MeshLink>((cursor, limit) => api.get<MeshLink[]>("/mesh/peers" + query({ limit, cursor })), [], 50);
  const tokens = usePaged<MeshToken>((cursor, limit) => api.get<MeshToken[]>("/mesh/tokens" + query({ limit, cursor })), [], 50);
  const discovered = useLoad(async () => (await api.get<MeshDiscovered[]>("/mesh/discovered")).data, []);
  useLiveRefresh(["mesh.peer.*", "mesh.sync.completed", "mesh.rejected"], links.refresh);
  useLiveRefresh(["mesh.token.*"], tokens.refresh);
  // A link made or removed changes which discovered peers are linked.
  useLiveRefresh(["mesh.peer.linked", "mesh.peer.unlinked"], discovered.reload);

  // A sync that fails as the last one did or brings nothing, and a peer heard of, send no event: read again now and then.
  useEffect(() => {
    const timer = setInterval(() => {
      links.refresh();
      discovered.reload();
    }, 30_000);
    return () => clearInterval(timer);
  }, [links.refresh, discovered.reload]);

  useEffect(() => {
    const follow = () => setTarget(targetFromHash());
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  const targetShown = target !== undefined && links.items.some((link) => link.id === target);
  useEffect(() => {
    if (!targetShown) return;
    const card = document.querySelector<HTMLElement>(`.link-card[data-link-id="${target}"]`);
    card?.scrollIntoView({ block: "center" });
    card?.focus({ preventScroll: true });
  }, [target, targetShown]);

  const byLink = useMemo(() => new Map(links.items.map((link) => [link.id, link.peer_name])), [links.items]);
  const byInstance = useMemo(() => new Map(links.items.map((link) => [link.peer_instance_id, link.peer_name])), [links.items]);
  const changed = (link: MeshLink) => links.replace((candidate) => candidate.id === link.id, link);
  const show = (id: string) => {
    location.hash = `#/mesh/${id}`;
  };

  return (
    <div class="mesh-tab">
      <p class="mesh-self muted" role="note">
        {self.data ? (
          <>
            This server is <strong class="mesh-self-name">{self.data.name}</strong> at <span class="mono wrap-anywhere">{self.data.url}</span>. Linked servers share the memory, doc and skill
            entries of the projects their tokens grant; each entry changes only where it was written.
          </>
        ) : (
          "Linked servers share the memory, doc and skill entries of the projects their tokens grant; each entry changes only where it was written."
        )}
      </p>

      <section class="mesh-section" aria-labelledby="mesh-links-heading">
        <header class="mesh-section-header">
          <h2 id="mesh-links-heading">Links</h2>
          <p class="muted small grow">Peers this server pulls from, each with a token its owner gave you.</p>
          <button type="button" class="primary" onClick={() => setLinking({ kind: "new" })}>
            Link a peer
          </button>
        </header>
        <PagedList paged={links} empty="No peer linked yet. Ask another Cairn's owner for a token (their Mesh view, New token), then link it here with “Link a peer”.">
          {(items) => (
            <ol class="link-list">
              {items.map((link) => (
                <li key={link.id}>
                  <LinkCard link={link} targeted={link.id === target} onChanged={changed} onSynced={links.refresh} onEdit={setEditing} onUnlink={setUnlinking} />
                </li>
              ))}
            </ol>
          )}
        </PagedList>
      </section>

      <DiscoveredSection discovered={discovered} peerNames={byInstance} onLink={(peer) => setLinking({ kind: "discovered", peer })} />

      <TokensSection paged={tokens} peerNames={byLink} selfUrl={self.data?.url} />

      {linking && (
        <LinkDialog
          discovered={linking.kind === "discovered" ? linking.peer : undefined}
          onClose={() => setLinking(undefined)}
          onShow={(id) => {
            setLinking(undefined);
            show(id);
          }}
          onLinked={(link) => {
            links.refresh();
            discovered.reload();
            tokens.refresh();
            notify("success", `Linked ${link.peer_name}${link.direction === "both" ? " both ways" : ""}: its entries arrive with the first sync.`);
          }}
        />
      )}
      {editing && (
        <LinkSettingsDialog
          link={editing}
          onClose={() => setEditing(undefined)}
          onSaved={(link) => {
            changed(link);
            notify("success", `Saved the link to ${link.peer_name}.`);
          }}
        />
      )}
      {unlinking && (
        <ConfirmDialog
          title={`Unlink ${unlinking.peer_name}?`}
          confirmLabel="Unlink"
          onClose={() => setUnlinking(undefined)}
          onConfirm={async () => {
            await api.delete(`/mesh/peers/${encode(unlinking.id)}`);
            links.replace((candidate) => candidate.id === unlinking.id, undefined);
            tokens.refresh();
            notify("success", `Unlinked ${unlinking.peer_name}.`);
          }}
        >
          <p>This server stops pulling from:</p>
          <p class="mono small wrap-anywhere">{unlinking.url}</p>
          <p>
            {unlinking.direction === "both"
              ? `The token minted for ${unlinking.peer_name} is revoked, so its link back turns unauthorized. `
              : ""}
            The copies it brought stay here, read-only; suppress one in the Memory tab to hide it.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
