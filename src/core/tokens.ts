// Tokens (docs/search.md "Budgets"): what an agent reads, measured the way the MCP bench and the
// tool-list test measure it, a token for every four characters. Close enough for English and JSON
// with the common tokenizers, and the same on every server whatever model reads it.

/** Characters per token. */
const CHARS_PER_TOKEN = 4;

export const tokensOfChars = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** The tokens of a value served as JSON. */
export const tokensOf = (value: unknown): number => tokensOfChars(JSON.stringify(value)?.length ?? 0);
