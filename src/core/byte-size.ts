import { AppError } from "./errors.js";

/**
 * Refuses `text` with 413 when it is longer than `maxBytes` in UTF-8, the measure of every size
 * limit (counting characters would let multi-byte text past it). `subject` opens the detail with
 * its own verb, "content exceeds" or "details exceed", so the sentence stays grammatical.
 */
export function checkByteSize(text: string, maxBytes: number, subject: string): void {
  if (Buffer.byteLength(text, "utf8") > maxBytes) throw new AppError("PAYLOAD_TOO_LARGE", `${subject} ${maxBytes} bytes`);
}
