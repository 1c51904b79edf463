import { describe, expect, it } from "vitest";
import { withoutNonXml, xmlAttribute, xmlText } from "../../src/services/memory-feed/xml.js";

// Text into the Atom feed: what XML 1.0 cannot carry goes, the rest is escaped (CONTRACT §15).

describe("text for XML", () => {
  it.for<[string, string, string]>([
    ["C0 controls but tab, line feed and carriage return", "a\u0000b\u0001c\u001Fd\te\nf\rg", "abcd\te\nf\rg"],
    ["unpaired surrogates, high and low", "x\uD800y\uDC00z", "xyz"],
    ["U+FFFE and U+FFFF", "p\uFFFEq\uFFFFr", "pqr"],
    ["a surrogate pair, which is one astral character", "smile \u{1F600}", "smile \u{1F600}"],
    ["the last characters XML allows below the surrogates and above them", "\uD7FF\uE000\uFFFD", "\uD7FF\uE000\uFFFD"],
  ])("removes %s only", ([, input, expected]) => {
    expect(withoutNonXml(input)).toBe(expected);
  });

  it("escapes markup in text, and a carriage return as a reference a parser keeps", () => {
    expect(xmlText(`<a href="x">&'</a>]]>\r\n`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;]]&gt;&#13;\n");
  });

  it("escapes tab and line breaks in attributes, which a parser would turn into spaces", () => {
    expect(xmlAttribute('a\tb\nc\rd"e&\u0002')).toBe("a&#9;b&#10;c&#13;d&quot;e&amp;");
  });
});
