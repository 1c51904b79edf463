// Peers this server heard of, on the local network (mDNS) or from a linked peer's gossip. Hearing
// of one links nothing: Link opens the link dialog at the address it was heard at, and still needs
// a token from that peer's owner.

import { Empty, ErrorNote, Loading } from "../../components/feedback.js";
import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { shortId } from "../../format.js";
import type { Loaded } from "../../hooks.js";
import type { MeshDiscovered } from "../../../../src/wire/mesh.js";

interface DiscoveredProps {
  discovered: Loaded<MeshDiscovered[]>;
  /** Peer names by instance id, for "gossip from …". */
  peerNames: ReadonlyMap<string, string>;
  onLink: (peer: MeshDiscovered) => void;
}

function via(value: string, peerNames: ReadonlyMap<string, string>): string {
  if (value === "mdns") return "the local network (mDNS)";
  if (value.startsWith("gossip:")) {
    const instance = value.slice("gossip:".length);
    return `gossip from ${peerNames.get(instance) ?? shortId(instance)}`;
  }
  return value;
}

export function DiscoveredSection({ discovered, peerNames, onLink }: DiscoveredProps) {
  const rows = discovered.data;
  return (
    <section class="mesh-section" aria-labelledby="mesh-discovered-heading">
      <header class="mesh-section-header">
        <h2 id="mesh-discovered-heading">Discovered peers</h2>
        <p class="muted small grow">Heard of, not linked: linking still takes a token from the peer's owner.</p>
      </header>
      {discovered.loading && !rows && <Loading />}
      {discovered.error !== undefined && <ErrorNote error={discovered.error} context="Could not read the discovered peers" onRetry={discovered.reload} />}
      {rows && rows.length === 0 && (
        <Empty>
          No peer heard of yet. Linked peers name the peers they know (gossip, every few minutes), and with <span class="mono">MESH_MDNS=on</span> Cairn listens on the local
          network. Nothing links itself.
        </Empty>
      )}
      {rows && rows.length > 0 && (
        <div class="table-wrap">
          <table class="data-table stacking-table discovered-table">
            <thead>
              <tr>
                <th scope="col">Peer</th>
                <th scope="col">Address</th>
                <th scope="col">Heard via</th>
                <th scope="col">Last seen</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((peer) => (
                <tr key={peer.instance_id} data-instance-id={peer.instance_id}>
                  <th scope="row">{peer.name}</th>
                  <td data-label="Address" class="mono small wrap-anywhere">
                    {peer.url}
                  </td>
                  <td data-label="Heard via">{via(peer.via, peerNames)}</td>
                  <td data-label="Last seen">
                    <Time iso={peer.last_seen_at} />
                  </td>
                  <td class="row-actions">
                    {peer.linked ? (
                      <Pill tone="mesh-active">linked</Pill>
                    ) : (
                      <button type="button" onClick={() => onLink(peer)} aria-label={`Link ${peer.name}`}>
                        Link…
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
