/** Keywords and text are compared as ASCII; any other character ends every keyword in progress. */
const ALPHABET = 128;

/**
 * Which of many keywords a piece of text holds, in one pass over it: an Aho–Corasick automaton
 * turned into a table, one lookup a character. Asking each keyword with `includes` cost a pass per
 * keyword, and a rule set has hundreds. Keywords may overlap or contain one another ("pass",
 * "password"); every one present is reported.
 */
export class KeywordScanner {
  /** The state after each state and ASCII character; state 0 is the start. */
  private readonly step: Uint16Array;
  /** Per state, the keywords that end there, those of its suffixes included. */
  private readonly ends: number[][] = [[]];

  /** `keywords`: ASCII, in lower case. */
  constructor(readonly keywords: readonly string[]) {
    const children = [new Map<number, number>()];
    keywords.forEach((keyword, index) => {
      if (!/^[\x20-\x7e]+$/.test(keyword) || keyword !== keyword.toLowerCase()) throw new Error(`keyword ${JSON.stringify(keyword)} is not printable lower-case ASCII`);
      let state = 0;
      for (let at = 0; at < keyword.length; at++) {
        const code = keyword.charCodeAt(at);
        let to = children[state]?.get(code);
        if (to === undefined) {
          to = children.length;
          children.push(new Map());
          this.ends.push([]);
          children[state]?.set(code, to);
        }
        state = to;
      }
      this.ends[state]?.push(index);
    });
    if (children.length > 0xffff) throw new Error("too many keywords for one scanner");
    this.step = new Uint16Array(children.length * ALPHABET);
    this.build(children);
  }

  /**
   * Breadth first, so the state a failure leads to (always shallower) is complete before the
   * states that fall back on it: where a state has no child for a character, it goes where its
   * failure state goes.
   */
  private build(children: Map<number, number>[]): void {
    const fail = new Uint16Array(children.length);
    const queue: number[] = [0];
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head] as number;
      for (let code = 0; code < ALPHABET; code++) {
        const child = children[state]?.get(code);
        const fallback = state === 0 ? 0 : (this.step[(fail[state] as number) * ALPHABET + code] as number);
        if (child === undefined) {
          this.step[state * ALPHABET + code] = fallback;
          continue;
        }
        this.step[state * ALPHABET + code] = child;
        fail[child] = fallback;
        this.ends[child]?.push(...(this.ends[fallback] ?? []));
        queue.push(child);
      }
    }
  }

  /** Calls `found` once for each keyword `lowerText` (already in lower case) holds. */
  scan(lowerText: string, found: (keyword: number) => void): void {
    let seen: Set<number> | undefined;
    let state = 0;
    for (let at = 0; at < lowerText.length; at++) {
      const code = lowerText.charCodeAt(at);
      state = code < ALPHABET ? (this.step[state * ALPHABET + code] as number) : 0;
      const ends = this.ends[state] as number[];
      if (ends.length === 0) continue;
      seen ??= new Set();
      for (const keyword of ends) {
        if (seen.has(keyword)) continue;
        seen.add(keyword);
        found(keyword);
      }
    }
  }
}
