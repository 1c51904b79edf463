import { checkByteSize } from "../core/byte-size.js";
import { redactSecrets, redactSecretsInTurns } from "./redaction.js";

/**
 * An entry's content and tags as they may be stored: each secret in the content replaced by
 * `[REDACTED:<kind>]`, and a tag that is a secret dropped (a tag is a label; one that is a secret
 * carries no meaning worth keeping), with how many went. The content's size is checked before,
 * which bounds the work, and after, since a marker can be longer than the secret it replaced.
 */
export async function redactEntryFields<T extends { content?: string | undefined; tags?: string[] | undefined }>(
  fields: T,
  maxContentBytes: number,
): Promise<{ fields: T; redactions: number }> {
  let content: { text: string; redactions: number } | undefined;
  if (fields.content !== undefined) {
    checkByteSize(fields.content, maxContentBytes, "content exceeds");
    content = await redactSecretsInTurns(fields.content);
    if (content.redactions > 0) checkByteSize(content.text, maxContentBytes, "content exceeds");
  }
  const tags = fields.tags?.filter((tag) => redactSecrets(tag).redactions === 0);
  const redactions = (content?.redactions ?? 0) + (fields.tags?.length ?? 0) - (tags?.length ?? 0);
  return { fields: { ...fields, ...(content && { content: content.text }), ...(tags && { tags }) }, redactions };
}
