// Usage texts, kept apart from the commands so `--help` and usage errors load nothing heavy.

export const serveHelp = `usage: cairn serve

Runs the HTTP server (REST, /docs, /openapi.json) on HOST:PORT with the data in DATA_DIR.
Settings come from the environment; see the README. SIGTERM or SIGINT drain in-flight
requests and close the database.`;

export const agentHelp = `usage: cairn agent add ID [--role agent|owner|viewer] [--name DISPLAY_NAME]
       cairn agent rotate-key ID

add         creates an agent directly in DATA_DIR and prints its API key once
rotate-key  issues a new key (the old one stops working) and prints it once`;

export const backupHelp = `usage: cairn backup FILE [--force]

Writes a consistent copy of the database to FILE using SQLite's online backup API; safe while
the server runs. Refuses to overwrite FILE unless --force is given.`;

export const reindexHelp = `usage: cairn reindex

Re-embeds every memory entry with the configured EMBEDDING_MODEL (for example after changing it).
Run it with the same settings as the server.`;

export const doctorHelp = `usage: cairn doctor

Checks the configuration, data directory permissions, database integrity, the keyword index and
the embedding model. Prints one line per check; exits 1 if any check fails.`;
