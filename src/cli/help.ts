// Usage texts, kept apart from the commands so `--help` and usage errors load nothing heavy.

export const serveHelp = `usage: cairn serve

Runs the HTTP server (REST, /mcp, /docs, /openapi.json) on HOST:PORT with the data in DATA_DIR,
and the archivist as a child process (restarted if it dies; ARCHIVIST=off to run without it).
Settings come from the environment; see the README. SIGTERM or SIGINT stop the archivist, drain
in-flight requests and close the database.`;

export const archivistHelp = `usage: cairn archivist

The archivist agent: merges conflicting memory entries as they are written, and every
SYNTHESIS_INTERVAL_SECONDS synthesises the last day's entries, decays and promotes entries and
checks the standing directives. It talks to the server at CAIRN_URL as CAIRN_AGENT_ID (default
ARCHIVIST_AGENT_ID) with the key CAIRN_API_KEY, and works only while it holds the archivist
lease, so several may run and one works. \`cairn serve\` starts one itself. SIGTERM or SIGINT
save its place in the event stream and release the lease.`;

export const mcpHelp = `usage: cairn mcp

An MCP server on stdin/stdout for agent hosts (Claude Code, Cursor, Codex, ...). Every request is
forwarded to the server at CAIRN_URL (default http://127.0.0.1:8470) as the agent CAIRN_AGENT_ID
with the key CAIRN_API_KEY. When CAIRN_URL is a loopback address and nothing answers, it starts
\`cairn serve\` there in the background (data in DATA_DIR, default ~/.cairn) and waits for it, so
all agents on the machine share one server. Messages go to stderr; stdout carries only MCP.`;

export const agentHelp = `usage: cairn agent add ID [--role agent|owner|viewer] [--name DISPLAY_NAME]
       cairn agent rotate-key ID

add         creates an agent directly in DATA_DIR and prints its API key once
rotate-key  issues a new key (the old one stops working) and prints it once`;

export const uiLinkHelp = `usage: cairn ui-link

Prints a one-time link that signs the human (UI_AGENT_ID) in to the web UI of the server using
DATA_DIR: it works once, within 24 hours, on the running server, with or without UI_PASSWORD.
Run it with the same settings as the server (PUBLIC_URL, or HOST and PORT, make the address).`;

export const backupHelp = `usage: cairn backup FILE [--force]

Writes a consistent copy of the database to FILE using SQLite's online backup API; safe while
the server runs. Refuses to overwrite FILE unless --force is given.`;

export const reindexHelp = `usage: cairn reindex

Re-embeds every memory entry with the configured EMBEDDING_MODEL (for example after changing it).
Run it with the same settings as the server.`;

export const doctorHelp = `usage: cairn doctor

Checks the configuration, data directory permissions, database integrity, the keyword index and
the embedding model. Prints one line per check; exits 1 if any check fails.`;
