import { createRequire } from "node:module";
import type * as TreeSitterModule from "web-tree-sitter";
import type { Language, Parser } from "web-tree-sitter";
import { grammarFile, type Lang } from "./languages.js";

/**
 * web-tree-sitter and its grammars, loaded on first use and kept: one runtime init per process,
 * one Language per grammar file. Only `cairn compile` loads this (DESIGN §4a).
 */
type TreeSitter = typeof TreeSitterModule;

const require = createRequire(import.meta.url);
let runtime: Promise<TreeSitter> | undefined;
const languages = new Map<string, Promise<Language>>();
const parsers = new Map<Lang, Parser>();

function loadRuntime(): Promise<TreeSitter> {
  runtime ??= import("web-tree-sitter").then(async (module) => {
    await module.Parser.init();
    return module;
  });
  // A failed init is not cached: the next call tries again.
  runtime.catch(() => (runtime = undefined));
  return runtime;
}

function loadLanguage(module: TreeSitter, file: string): Promise<Language> {
  let language = languages.get(file);
  if (language === undefined) {
    language = module.Language.load(require.resolve(`@vscode/tree-sitter-wasm/wasm/${file}`));
    languages.set(file, language);
    language.catch(() => languages.delete(file));
  }
  return language;
}

/** A parser set to `lang`'s grammar (one per language, reused). */
export async function parserFor(lang: Lang): Promise<Parser> {
  const cached = parsers.get(lang);
  if (cached !== undefined) return cached;
  const module = await loadRuntime();
  const language = await loadLanguage(module, grammarFile[lang]);
  const parser = parsers.get(lang) ?? new module.Parser().setLanguage(language);
  parsers.set(lang, parser);
  return parser;
}
