/** gitleaks' configuration, as far as redaction reads it (the fields of gitleaks.toml it uses). */
export interface GitleaksAllowlist {
  /** What the regexes test: the secret (default), the whole match, or the line. */
  regexTarget?: string;
  /** "AND": every check must hold; otherwise any one. */
  condition?: string;
  regexes: string[];
  stopwords: string[];
  /** The list also names paths or commits: a capture has neither. */
  scoped?: boolean;
}

export interface GitleaksRule {
  id: string;
  /** Go RE2 syntax. */
  regex?: string;
  secretGroup?: number;
  /** Shannon entropy (bits per character) the secret must reach. */
  entropy?: number;
  /** Lower case; the rule runs only on text holding one. */
  keywords: string[];
  /** The rule applies to files whose path matches: never to a capture. */
  path?: string;
  allowlists: GitleaksAllowlist[];
}

export interface GitleaksConfig {
  minVersion: string;
  allowlist: { regexes: string[]; stopwords: string[] };
  rules: GitleaksRule[];
}
