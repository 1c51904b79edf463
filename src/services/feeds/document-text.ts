/**
 * The text of a fetched feed document. The encoding is chosen as RFC 7303 §3 orders it for XML: a
 * byte order mark wins, then the `charset` of the Content-Type, then the XML declaration's
 * `encoding`, else UTF-8 (which is also what JSON is). UTF-16 and UTF-32 without a mark are
 * recognised by how `<?` is laid out in the first bytes. An encoding Node's TextDecoder does not
 * know falls back to UTF-8; undecodable bytes become U+FFFD, never an error; C1 controls become
 * the windows-1252 characters they stand for.
 */
export function decodeFeedBody(body: string | Uint8Array, contentType?: string): string {
  if (typeof body === "string") return withoutC1Controls(body);
  const marked = byteOrderMark(body);
  if (marked) return decode(body.subarray(marked.length), marked.encoding);
  const wide = wideEncodingByLayout(body);
  if (wide) return decode(body, wide);
  const declared = charsetOf(contentType) ?? xmlDeclarationEncoding(body);
  return decode(body, declared ?? "utf-8");
}

type WideEncoding = "utf-16le" | "utf-16be" | "utf-32le" | "utf-32be";

function byteOrderMark(bytes: Uint8Array): { encoding: string; length: number } | undefined {
  const [b0, b1, b2, b3] = [bytes[0], bytes[1], bytes[2], bytes[3]];
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return { encoding: "utf-8", length: 3 };
  // UTF-32 LE's mark begins like UTF-16 LE's, so it is looked for first.
  if (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) return { encoding: "utf-32le", length: 4 };
  if (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff) return { encoding: "utf-32be", length: 4 };
  if (b0 === 0xff && b1 === 0xfe) return { encoding: "utf-16le", length: 2 };
  if (b0 === 0xfe && b1 === 0xff) return { encoding: "utf-16be", length: 2 };
  return undefined;
}

/** `<` (or `<?`) written in two or four bytes a character: the document is UTF-16 or UTF-32. */
function wideEncodingByLayout(bytes: Uint8Array): WideEncoding | undefined {
  const head = Array.from(bytes.subarray(0, 4)).join(",");
  if (head === "60,0,0,0") return "utf-32le";
  if (head === "0,0,0,60") return "utf-32be";
  if (head === "60,0,63,0") return "utf-16le";
  if (head === "0,60,0,63") return "utf-16be";
  return undefined;
}

function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType.slice(0, 512));
  return match?.[1];
}

/** The `encoding` of `<?xml … ?>`, read from the first bytes as ASCII. */
function xmlDeclarationEncoding(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024)).toString("latin1");
  const declaration = /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  return declaration?.[1];
}

function decode(bytes: Uint8Array, encoding: string): string {
  const label = encoding.trim().toLowerCase();
  if (label === "utf-32le" || label === "utf-32be" || label === "utf-32") return decodeUtf32(bytes, label !== "utf-32be");
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return withoutC1Controls(decoder.decode(bytes));
}

/** windows-1252's characters for 0x80–0x9F; its five unassigned bytes stay the C1 controls. */
const WINDOWS_1252_HIGH = [..."€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ"];

/**
 * C1 controls in a feed's text are windows-1252 characters that went through the wrong decoder
 * (an "’" saved as U+0092), so they are read as those characters — the HTML standard does the same
 * for `&#146;`. It also mends Node 20, whose TextDecoder reads windows-1252 (and latin1, ascii:
 * WHATWG aliases of it) as ISO-8859-1. Without the controls, a leading byte order mark goes too.
 */
function withoutC1Controls(text: string): string {
  const mended = text.replace(/[\u0080-\u009f]/g, (control) => WINDOWS_1252_HIGH[control.charCodeAt(0) - 0x80] ?? control);
  return mended.startsWith("\ufeff") ? mended.slice(1) : mended;
}

/** UTF-32, which TextDecoder does not offer; a code point out of range becomes U+FFFD. */
function decodeUtf32(bytes: Uint8Array, littleEndian: boolean): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks: string[] = [];
  let codePoints: number[] = [];
  for (let offset = 0; offset + 4 <= bytes.byteLength; offset += 4) {
    const codePoint = view.getUint32(offset, littleEndian);
    const valid = codePoint <= 0x10ffff && (codePoint < 0xd800 || codePoint > 0xdfff);
    codePoints.push(valid ? codePoint : 0xfffd);
    if (codePoints.length === 8192) {
      chunks.push(String.fromCodePoint(...codePoints));
      codePoints = [];
    }
  }
  chunks.push(String.fromCodePoint(...codePoints));
  return withoutC1Controls(chunks.join(""));
}
