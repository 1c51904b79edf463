/**
 * Whether the document's DOCTYPE declares entities (`<!ENTITY` in its internal subset).
 *
 * feedsmith parses with fast-xml-parser's entity processing off, so a declared entity is never
 * expanded (billion laughs) nor fetched (`SYSTEM "file:///…"`): its reference stays as literal
 * text. A feed has no honest need for entity declarations, so rather than ingest `&lol9;` as
 * text, a document that declares any is refused before parsing (CONTRACT §15: a hostile document
 * costs one failed poll). Only the prolog is read — the XML declaration, comments, processing
 * instructions and the DOCTYPE before the root element — in one pass, quotes and comments inside
 * the internal subset respected.
 */
export function declaresEntities(text: string): boolean {
  let at = 0;
  for (;;) {
    while (at < text.length && isXmlSpace(text.charCodeAt(at))) at++;
    if (text.startsWith("<?", at)) {
      const end = text.indexOf("?>", at + 2);
      if (end < 0) return false;
      at = end + 2;
    } else if (text.startsWith("<!--", at)) {
      const end = text.indexOf("-->", at + 4);
      if (end < 0) return false;
      at = end + 3;
    } else if (text.slice(at, at + 9).toUpperCase() === "<!DOCTYPE") {
      return internalSubsetDeclaresEntities(text, at + 9);
    } else {
      return false;
    }
  }
}

function internalSubsetDeclaresEntities(text: string, from: number): boolean {
  let at = from;
  let inSubset = false;
  while (at < text.length) {
    const character = text[at];
    if (character === '"' || character === "'") {
      const end = text.indexOf(character, at + 1);
      if (end < 0) return false;
      at = end + 1;
      continue;
    }
    if (!inSubset) {
      if (character === ">") return false;
      if (character === "[") inSubset = true;
      at++;
      continue;
    }
    if (character === "]") return false;
    if (text.startsWith("<!--", at)) {
      const end = text.indexOf("-->", at + 4);
      if (end < 0) return false;
      at = end + 3;
      continue;
    }
    if (character === "<" && text.slice(at, at + 8).toUpperCase() === "<!ENTITY") return true;
    at++;
  }
  return false;
}

function isXmlSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}
