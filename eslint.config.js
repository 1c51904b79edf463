import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "scratch/", "coverage/", "models/", "ui/dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ["*.js", "bin/*.js", "plugin/claude-code/hooks/*.mjs", "ui/*.mjs", "src/*.mjs", "test/helpers/fs-glob-sync/*.mjs"], maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 16 }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "error",
      eqeqeq: ["error", "always"],
    },
  },
  {
    // The web UI is a browser bundle with its own tsconfig: DOM types and Preact JSX. Its globals
    // come from the DOM lib through type information (typescript-eslint turns no-undef off).
    files: ["ui/src/**/*.ts", "ui/src/**/*.tsx"],
    languageOptions: {
      parserOptions: { projectService: false, project: "./ui/tsconfig.json", tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // SQLite's own parts (sqlite-vec's tables, pragmas) implement the async store contract with
    // better-sqlite3's synchronous calls; the shared repositories await their runner instead.
    files: ["src/store/sqlite/vectors.ts", "src/store/sqlite/maintenance.ts"],
    rules: { "@typescript-eslint/require-await": "off" },
  },
  {
    // Entry points may talk to the terminal and exit.
    files: ["src/cli.ts", "src/cli/**", "bench/**", "bin/**"],
    rules: { "no-console": "off" },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: "readonly", URL: "readonly", console: "readonly", fetch: "readonly", AbortSignal: "readonly" } },
  },
);
