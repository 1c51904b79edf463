import { z } from "zod";
import { meshSyncResult } from "../src/wire/mesh.js";
import { defineOperation } from "./operation.js";
import { idRef } from "../src/wire/fields.js";

// Syncing mesh links on request, and hiding a peer's copy here (CONTRACT §16). Mesh administration
// is the owner's, over REST and the web UI only (§11: never an MCP tool).

const meshPeerSync = defineOperation({
  name: "mesh_peer_sync",
  title: "Sync a mesh link now",
  description:
    "Pulls the peer's changes now instead of at the link's next sync, page by page up to the run's budget, and " +
    "with `anti_entropy=true` also compares merkle summaries and repairs what differs. Says what was applied. Waits " +
    "up to 15 s for a sync of the link already running; 409 if it still runs, or the link is paused; 502 when the peer fails (the link's status and " +
    "last_error say so too). Owner only.",
  kind: "action",
  roles: ["owner"],
  restOnly: true,
  http: { method: "POST", path: "/mesh/peers/:link_id/sync", status: 200, query: ["anti_entropy"] },
  input: z.strictObject({
    link_id: z.uuid(),
    anti_entropy: z.boolean().optional().describe("compare merkle summaries too, due or not"),
  }),
  output: meshSyncResult,
  errors: ["NOT_FOUND", "CONFLICT", "UPSTREAM_ERROR"],
  handle({ services }, input) {
    return services.meshSync.syncNow(input.link_id, input.anti_entropy === true);
  },
});

const memorySuppress = defineOperation({
  name: "memory_suppress",
  title: "Suppress a peer's copy here",
  description:
    "Hides a copy of a peer's entry on this instance: deleted here at the origin's version, never imported " +
    "again at that version or a lower one, never passed on to other peers. A newer version from its origin " +
    "brings it back. Entries written here are deleted, not suppressed (403). Owner only.",
  kind: "delete",
  roles: ["owner"],
  restOnly: true,
  http: { method: "POST", path: "/memory/:id/suppress" },
  input: z.strictObject({ id: idRef }),
  output: undefined,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  handle({ services, caller }, input) {
    return services.meshSync.suppress(caller, input.id);
  },
});

export const meshSyncOperations = [meshPeerSync, memorySuppress];
