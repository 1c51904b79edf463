import { Parser } from "htmlparser2";

/**
 * Everything in `text` that a later HTML renderer (or a URL parser, once the text lands in an
 * attribute) could take for markup or script, by name; empty when the text is inert. Checked on
 * the text as it is and on the text with its character references decoded, so an entity variant
 * (`&lt;script`, `javascript&#58;`) counts as much as the plain one.
 */
export function markupResidue(text: string): string[] {
  const found: string[] = [];
  for (const [form, candidate] of [
    ["", text],
    ["decoded ", decodeReferences(text)],
  ] as const) {
    const tag = /<[A-Za-z/!?]/.exec(candidate);
    if (tag) found.push(`${form}markup ${JSON.stringify(around(candidate, tag.index))}`);
    // Browsers drop tabs and line breaks anywhere in a URL, so white space may split the scheme.
    const scheme = /(?:j\s*a\s*v\s*a|v\s*b)\s*s\s*c\s*r\s*i\s*p\s*t\s*:/i.exec(candidate);
    if (scheme) found.push(`${form}script URL ${JSON.stringify(around(candidate, scheme.index))}`);
    const dataUrl = /\bd\s*a\s*t\s*a\s*:\s*(?:text\s*\/\s*html|image\s*\/\s*svg)/i.exec(candidate);
    if (dataUrl) found.push(`${form}data URL ${JSON.stringify(around(candidate, dataUrl.index))}`);
    const handler = /\bon[a-z]+\s*=/i.exec(candidate);
    if (handler) found.push(`${form}handler ${JSON.stringify(around(candidate, handler.index))}`);
  }
  return found;
}

function around(text: string, index: number): string {
  return text.slice(Math.max(0, index - 20), index + 30);
}

/** `text` with its character references decoded as an HTML parser decodes them in text. */
function decodeReferences(text: string): string {
  const parts: string[] = [];
  // Every `<` is swapped for a private-use character first, so the parser sees only text.
  const parser = new Parser({ ontext: (part) => parts.push(part) }, { decodeEntities: true });
  parser.write(text.replaceAll("<", "\ue000"));
  parser.end();
  return parts.join("").replaceAll("\ue000", "<");
}
