import { describe, expect, it } from "vitest";
import { htmlToText, textToPlainText, truncateText } from "../../src/services/feeds/plain-text.js";
import { markupResidue } from "../helpers/markup-residue.js";

describe("htmlToText: HTML from a feed as plain text", () => {
  it("keeps the text, with paragraphs, line breaks, list items and cells laid out", () => {
    const html = "<h1>Title</h1><p>Hello <b>world</b>,</p><p>second&nbsp;para</p>line<br>next<br><br>after<ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>";
    expect(htmlToText(html, 2000)).toBe("Title\n\nHello world,\n\nsecond para\n\nline\nnext\n\nafter\n- one\n- two\na b\nc");
  });

  it("collapses white space and keeps the lines of preformatted text", () => {
    expect(htmlToText("<div>  lots   of \n\n\n space </div><pre>  code\n    indented  </pre>tail", 2000)).toBe("lots of space\n\n  code\n    indented\n\ntail");
  });

  it("decodes entities, named, numeric and legacy ones without a semicolon", () => {
    expect(htmlToText("caf&eacute; &#8220;quoted&#x201d; &copy 2024 AT&amp;T", 2000)).toBe("café “quoted” © 2024 AT&T");
  });

  it("leaves text alone that only looks a little like markup", () => {
    expect(htmlToText("x &lt; y, Q&amp;A, AT&T, 3 &gt; 2", 2000)).toBe("x < y, Q&A, AT&T, 3 > 2");
  });

  it.each(["script", "style", "noscript", "template", "iframe", "noframes", "object", "applet", "noembed", "svg", "math"])("drops a %s element with all its content", (name) => {
    const text = htmlToText(`before<${name} id="x">inside <b>nested</b> alert(1)</${name}>after`, 2000);
    expect(text).toBe("beforeafter");
  });

  it("drops an unterminated script to the end of the document", () => {
    expect(htmlToText("kept<script>alert(1)", 2000)).toBe("kept");
  });

  it("never lets an attribute through: no URL, no handler, no style", () => {
    const html = `<a href="javascript:alert(1)" onclick="steal()">link</a> <img src=x onerror=alert(2) alt="alt text"> <p style="background:url(javascript:x)">styled</p>`;
    const text = htmlToText(html, 2000);
    expect(text).toBe("link\n\nstyled");
    expect(markupResidue(text)).toEqual([]);
  });

  it("treats markup escaped twice as markup: the tags go, the script's content with them", () => {
    expect(htmlToText("&lt;p&gt;Hello&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt; &lt;b&gt;world&lt;/b&gt;", 2000)).toBe("Hello\n\nworld");
    expect(htmlToText("a &amp;lt;script&amp;gt;x()&amp;lt;/script&amp;gt; b", 2000)).toBe("a b");
  });

  it("treats markup inside raw-text elements (textarea, title, xmp) as markup in the next round", () => {
    expect(htmlToText("<textarea><script>bad()</script>ok</textarea><title><b>t</b></title><xmp><style>x</style>y</xmp>", 2000)).toBe("okty");
  });

  it("shows markup escaped more often than it converts with look-alikes that no parser reads as markup", () => {
    let html = "<script>alert(1)</script>";
    for (let index = 0; index < 6; index++) html = html.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
    const text = htmlToText(html, 2000);
    expect(text).not.toBe("");
    expect(markupResidue(text)).toEqual([]);
  });

  it("shows script URLs, script data URLs and handler shapes in text with a look-alike colon or equals sign", () => {
    const text = htmlToText("see javascript:alert(1), JaVa\tScRiPt :x, vbscript:msgbox, data:text/html;base64,xx and onclick = go() but not metadata: or Data: values", 2000);
    expect(text).toBe("see javascript：alert(1), JaVa ScRiPt ：x, vbscript：msgbox, data：text/html;base64,xx and onclick ＝ go() but not metadata: or Data: values");
    expect(markupResidue(text)).toEqual([]);
  });

  it("removes control characters and lone surrogates, keeping pairs", () => {
    expect(htmlToText("a\u0000b\u0007c\u001bd \ud800 e \udc00 f 😀", 2000)).toBe("abcd e f 😀");
  });

  it("keeps at most maxChars characters, ending in an ellipsis, never half a surrogate pair", () => {
    const text = htmlToText(`<p>${"😀".repeat(50)}</p>`, 8);
    expect(text.length).toBeLessThanOrEqual(8);
    expect(text).toBe("😀😀😀…");
    expect(htmlToText("short", 8)).toBe("short");
  });

  it("answers an empty string for HTML without text", () => {
    expect(htmlToText("<br><p></p><script>x</script><!-- comment -->", 2000)).toBe("");
  });

  it("converts hostile HTML (deep nesting, a megabyte of tags, unclosed everything) to bounded text", () => {
    expect(htmlToText("<div>".repeat(100) + "nested" + "</div>".repeat(100), 2000)).toBe("nested");
    // Past 256 open elements the rest is not read.
    expect(htmlToText("before" + "<div>".repeat(100_000) + "deep" + "</div>".repeat(100_000), 2000)).toBe("before");
    expect(htmlToText("before" + "<b>".repeat(300_000), 2000)).toBe("before");
    const huge = htmlToText("<p>word <b>bold</b></p>".repeat(60_000), 2000);
    expect(huge.length).toBeLessThanOrEqual(2000);
    expect(huge.endsWith("…")).toBe(true);
    expect(markupResidue(htmlToText("<a <b <c <d " + "<".repeat(100_000), 2000))).toEqual([]);
  });

  it("leaves no markup, script URL or handler, and nothing of a script or an attribute, in any mix of hostile fragments", () => {
    // alert( stands only where a browser would run it (script content, attributes); go( is text.
    const fragments = [
      "<script>alert(1)</script>",
      "&lt;script&gt;alert(2)&lt;/script&gt;",
      "&amp;lt;img src=x onerror=alert(3)&amp;gt;",
      "<scr<script>ipt>go(4)</script>",
      "<textarea><img src=x onerror=alert(5)></textarea>",
      "<a href='&#106;avascript&#58;alert(6)'>x</a>",
      "javascript&amp;#58;go(7)",
      "<svg/onload=alert(8)>",
      "<!--<script>-->",
      "<![CDATA[<script>]]>",
      "&#x3c;iframe&#x3e;",
      "< /script>",
      "<",
      "&",
      "text",
      "\n",
      "<style>*{}</style>",
      "on",
      "click=",
      "java",
      "script:",
    ];
    let seed = 7;
    const next = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let sample = 0; sample < 500; sample++) {
      const html = Array.from({ length: 1 + (next() % 8) }, () => fragments[next() % fragments.length]).join("");
      const text = htmlToText(html, 2000);
      expect(markupResidue(text), html).toEqual([]);
      expect(text, html).not.toMatch(/alert\(/);
    }
  });
});

describe("textToPlainText: text a feed declares plain", () => {
  it("keeps a literal tag visible, with a look-alike bracket, and its words", () => {
    expect(textToPlainText("Use the <details> element & AT&T", 2000)).toBe("Use the ＜details> element & AT&T");
  });

  it("shows references a renderer would decode with a look-alike ampersand", () => {
    const text = textToPlainText("&lt;script&gt; and &#60;b&#62; and &amp;", 2000);
    expect(text).toBe("＆lt;script＆gt; and ＆#60;b＆#62; and ＆amp;");
    expect(markupResidue(text)).toEqual([]);
  });

  it("collapses white space within lines and keeps at most one blank line", () => {
    expect(textToPlainText("  one   two \n\n\n\n three\tfour  ", 2000)).toBe("one two\n\nthree four");
  });
});

describe("truncateText", () => {
  it("cuts before a surrogate pair rather than through it", () => {
    expect(truncateText("ab😀cd", 4)).toBe("ab…");
    expect(truncateText("ab😀cd", 5)).toBe("ab😀…");
    expect(truncateText("abc", 0)).toBe("");
  });
});
