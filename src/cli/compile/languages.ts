import { extname } from "node:path";

/** A language `cairn compile` parses, and the grammar (a wasm file of @vscode/tree-sitter-wasm) it uses. */
export type Lang = "typescript" | "tsx" | "javascript" | "python" | "go" | "rust" | "java";

/** The grammar file (under `@vscode/tree-sitter-wasm/wasm/`) of each language. */
export const grammarFile: Record<Lang, string> = {
  typescript: "tree-sitter-typescript.wasm",
  tsx: "tree-sitter-tsx.wasm",
  // tree-sitter-javascript reads JSX too.
  javascript: "tree-sitter-javascript.wasm",
  python: "tree-sitter-python.wasm",
  go: "tree-sitter-go.wasm",
  rust: "tree-sitter-rust.wasm",
  java: "tree-sitter-java.wasm",
};

const byExtension: Record<string, Lang> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascript",
  ".py": "python",
  ".pyi": "python",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
};

/** The parsed language of a path, or undefined when Cairn has no grammar for it. */
export function languageOf(path: string): Lang | undefined {
  return byExtension[extname(path).toLowerCase()];
}

/**
 * What a `file` unit's `lang` says for a path without a grammar: its extension, or "text" when it
 * has none, or one the server would refuse as a language (a space, or longer than a word).
 */
export function plainLanguageOf(path: string): string {
  const extension = extname(path).toLowerCase().slice(1);
  return /^[a-z0-9][a-z0-9_+-]{0,31}$/.test(extension) ? extension : "text";
}
