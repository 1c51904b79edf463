import { describe, expect, it } from "vitest";
import { KeywordScanner } from "../../src/services/redaction/keywords.js";

const found = (scanner: KeywordScanner, text: string): string[] => {
  const keywords: string[] = [];
  scanner.scan(text.toLowerCase(), (index) => keywords.push(scanner.keywords[index] as string));
  return keywords.sort();
};

describe("the keyword scanner", () => {
  it("reports every keyword a text holds, once, overlapping and nested ones too", () => {
    const scanner = new KeywordScanner(["he", "she", "his", "hers", "pass", "password", "-p", "://"]);
    expect(found(scanner, "ushers")).toEqual(["he", "hers", "she"]);
    expect(found(scanner, "PASSWORD=x; password again; she")).toEqual(["he", "pass", "password", "she"]);
    expect(found(scanner, "mysql -pX https://a")).toEqual(["-p", "://"]);
    expect(found(scanner, "nothing here")).toEqual(["he"]);
    expect(found(scanner, "")).toEqual([]);
  });

  it("reads any other character as the end of every keyword in progress", () => {
    const scanner = new KeywordScanner(["pass", "key"]);
    expect(found(scanner, "päss kéy pass")).toEqual(["pass"]);
    expect(found(scanner, "😀key")).toEqual(["key"]);
  });

  it("refuses keywords that are not lower-case printable ASCII", () => {
    expect(() => new KeywordScanner(["Pass"])).toThrow(/not printable lower-case ASCII/);
    expect(() => new KeywordScanner(["pässword"])).toThrow(/not printable lower-case ASCII/);
  });

  it("finds what asking each keyword with includes finds, on random text", () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = "abcab:-/ ";
    const word = (length: number): string => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
    for (let round = 0; round < 200; round++) {
      const keywords = [...new Set(Array.from({ length: 1 + Math.floor(random() * 12) }, () => word(1 + Math.floor(random() * 4))))];
      const scanner = new KeywordScanner(keywords);
      const text = word(Math.floor(random() * 60));
      expect(found(scanner, text), `${JSON.stringify(keywords)} in ${JSON.stringify(text)}`).toEqual(keywords.filter((keyword) => text.includes(keyword)).sort());
    }
  });
});
