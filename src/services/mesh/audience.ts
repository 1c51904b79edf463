import type { Reader, Store } from "../../store/store.js";

/**
 * Mesh events go to the owner role only (CONTRACT §11): the audience is the owners at the time of
 * the event, so an agent made owner later does not see the mesh's history, and one demoted keeps
 * only what it saw.
 */
export async function ownersAudience(store: Store, r: Reader): Promise<string[]> {
  // An empty audience is nobody's, not everyone's (the event is restricted all the same).
  return store.agents.withRole(r, "owner");
}
