import { z } from "zod";
import { safeUrl } from "../../net/safe-url.js";
import { PeerFailure } from "./pull.js";

const pageShape = z.object({
  items: z.array(z.unknown()),
  _cairn: z.object({ instance_id: z.string(), max_change_seq: z.number().int().min(0) }),
});

export interface PeerPage {
  items: unknown[];
  maxChangeSeq: number;
}

/**
 * A peer's feed page, as far as a sync relies on it: items (each checked on its own later), and
 * the instance that served it, which must be the one the link was made with — a URL that now
 * answers as another instance gets nothing applied.
 */
export function peerPage(body: unknown, url: string, peerInstanceId: string, maxItems: number): PeerPage {
  const parsed = pageShape.safeParse(body);
  if (!parsed.success) throw new PeerFailure(`${safeUrl(url)} answered with something that is not a Cairn feed page`);
  if (parsed.data._cairn.instance_id !== peerInstanceId) throw new PeerFailure(`${safeUrl(url)} now answers as another instance`);
  if (parsed.data.items.length > maxItems) throw new PeerFailure(`${safeUrl(url)} answered with more items than asked for`);
  return { items: parsed.data.items, maxChangeSeq: parsed.data._cairn.max_change_seq };
}
