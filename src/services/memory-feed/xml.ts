// Text into XML 1.0 (the Atom feed): first every character XML cannot carry at all is removed —
// C0 controls but tab, line feed and carriage return, unpaired surrogates, U+FFFE and U+FFFF —
// since no escape can write them; then everything markup could mistake is escaped.

const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export const withoutNonXml = (text: string): string => text.replace(NOT_XML, "");

const TEXT_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\r": "&#13;" };
// In an attribute, a parser turns raw tab and line breaks into spaces: they are written as references.
const ATTRIBUTE_ESCAPES: Record<string, string> = { ...TEXT_ESCAPES, "\t": "&#9;", "\n": "&#10;" };

/** Character data; a carriage return is written as a reference, which a parser keeps (a raw one becomes a line feed). */
export const xmlText = (text: string): string => withoutNonXml(text).replace(/[&<>"'\r]/g, (char) => TEXT_ESCAPES[char] ?? char);

/** An attribute value, for double quotes. */
export const xmlAttribute = (text: string): string => withoutNonXml(text).replace(/[&<>"'\r\t\n]/g, (char) => ATTRIBUTE_ESCAPES[char] ?? char);
