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
with the key CAIRN_API_KEY (or the key in the file CAIRN_KEY_FILE). Without them it uses the agent
that onboarding connected to the working directory (or the nearest one above it). MCP_TOOLSET
(core, standard, all) chooses the tools it lists. When CAIRN_URL is a loopback address and nothing
answers, it starts \`cairn serve\` there in the background (data in DATA_DIR, default ~/.cairn;
its output in DATA_DIR/logs/server.log) and waits for it, so all agents on the machine share one
server. It exits when its standard input closes, ending its session on the server. Messages go
to stderr; stdout carries only MCP.`;

export const statusHelp = `usage: cairn status

Says whether a server answers at CAIRN_URL (and its health), and which server \`cairn serve\`
recorded for DATA_DIR (its pid in DATA_DIR/server.pid, its URL in DATA_DIR/server.json). Exits 0 when a server answers at CAIRN_URL, 1 otherwise.`;

export const stopHelp = `usage: cairn stop

Stops the server recorded for DATA_DIR (the one \`cairn serve\` or \`cairn mcp\` started there) and
waits for it to finish its requests and exit.`;

export const agentHelp = `usage: cairn agent add ID [--role agent|owner|viewer] [--name DISPLAY_NAME]
       cairn agent rotate-key ID
       cairn agent list [--json]

add         creates an agent directly in DATA_DIR and prints its API key once
rotate-key  issues a new key (the old one stops working) and prints it once
list        every agent of the server at CAIRN_URL, with its role, status and project, asked as
            the owner (see \`cairn export --help\` for how the owner is found)`;

const asTheOwner = `It talks to the server at CAIRN_URL (default http://127.0.0.1:8470), which must be running, as
the owner: the UI_AGENT_ID key the server wrote to DATA_DIR/credentials.json, or CAIRN_AGENT_ID
with CAIRN_API_KEY when both are set. Run it with the server's settings.`;

export const exportHelp = `usage: cairn export [--project P] [--since TIME] [--output FILE]

Writes the server's export to standard output (or to FILE, created private): JSON Lines of every
project (with its members), agent (never a key), shared memory entry (never a private one; a
compiled one with its anchor), graph edge, decision, blueprint version, task, blueprint run,
message (with each recipient's read state) and handoff, with their ids, authors, versions and
times. --project keeps one project's records (--project "" only global ones, agents and handoffs
included); --since keeps records changed after TIME (RFC 3339). \`cairn import\` reads it back.

${asTheOwner}`;

export const importHelp = `usage: cairn import FILE [--dry-run] [--project P] [--json]

Imports FILE (- for standard input) through the server: a \`cairn export\` file, whose records
keep their ids, authors, versions and times (those whose id exists are skipped), or the MCP
reference memory server's memory.json, whose entities become memory entries in --project (default
the owner's current project; "" for global) and whose relations become relates_to edges. Entries
are embedded again with the server's model; imported agents have no key until an owner gives them
one (\`POST /agents/{id}/rotate-key\`). The file is streamed in one request, whatever its size
(each line at most MAX_BODY_BYTES); a line that cannot be imported is reported with its number,
and the others are imported. --dry-run imports the whole file and rolls it back: it reports what
the import would, and writes nothing. Exits 1 when a line was refused.

${asTheOwner}`;

export const searchHelp = `usage: cairn search QUERY [--limit N] [--project P] [--type TYPE] [--tag TAG] [--code] [--json]

Searches memory (words and meaning, as agents do) and prints each hit with its id, type, project,
author and a preview; --json prints the results as the API returns them. The owner sees every
project's shared entries, never another agent's private ones. Compiled code takes part only with
--code (or --type compiled).

${asTheOwner}`;

export const uiLinkHelp = `usage: cairn ui-link

Prints a one-time link that signs the human (UI_AGENT_ID) in to the web UI of the server using
DATA_DIR: it works once, within 24 hours, on the running server, with or without UI_PASSWORD.
The address is PUBLIC_URL when set, else that of the server running for DATA_DIR, else HOST and
PORT's: run it with the server's DATA_DIR (and PUBLIC_URL, if the server has one).`;

export const backupHelp = `usage: cairn backup FILE [--force]

Writes a consistent copy of the database to FILE using SQLite's online backup API; safe while
the server runs. Refuses to overwrite FILE unless --force is given.`;

export const migrateStoreHelp = `usage: cairn migrate-store --from SQLITE_FILE --to DATABASE_URL

Copies a SQLite store (DATA_DIR/cairn.db) into an empty PostgreSQL database: agents with their key
hashes, projects, memory with its vectors, tasks, messages, events, handoffs, the graph and the
archivist's state, keys and times unchanged. Counts every table on both sides; a difference, a
target that already holds data, or a row PostgreSQL cannot hold (text with a NUL character; the
message names it) copies nothing. A store of an older cairn is brought up to date in place first;
a current one is only read. Stop the server first: the copy reads the file as it was when it
began, and what is written after is not copied. Then start the server with DATABASE_URL set, the
same DATA_DIR (its credentials.json) and the same EMBEDDING_MODEL (another one embeds every entry
again).`;

export const reindexHelp = `usage: cairn reindex

Re-embeds every memory entry with the configured EMBEDDING_MODEL (for example after changing it).
Run it with the same settings as the server.`;

export const doctorHelp = `usage: cairn doctor

Checks the configuration (and warns when a server reachable from other machines lacks PUBLIC_URL
or REGISTRATION_KEY), the server answering at CAIRN_URL (its health and version), data directory
permissions, database integrity, the keyword index, the schema, the audit log (and whether it is
ahead of the database, as after restoring a backup) and the embedding model. It creates nothing: a
missing DATA_DIR or database is reported. Prints one line per check (ok, WARN or FAIL); exits 1 if
any check fails.`;

export const compileHelp = `usage: cairn compile [PATH...] [--all] [--exclude PATTERN]... [--project P] [--dry-run] [--json]
       cairn compile --install-hook [--project P]

Turns the code of the git repository holding the working directory into \`compiled\` memory
entries, one per module, declaration and method (CONTRACT §18). Only hashes and generated
descriptions (signature, doc comment's first paragraph, members, names used) leave the machine,
never source text. It reads \`git ls-files\` (tracked files, and new ones git does not ignore):
with PATHs, the files at or under them; with --all, every file; with neither, the files the last
commit changed and those changed since. Binary files and files over 1 MiB are skipped, and so
are tests, fixtures, vendored and generated code (test/, *.test.*, fixtures/, vendor/, dist/,
*.min.js, ... : docs/compile.md lists them); a .cairnignore at the repository's root, in
.gitignore syntax, adds patterns or brings files back with !PATTERN. It asks
the server which units are fresh, sends the others, and prunes what is gone: a deleted file's
entries, and a removed symbol's. The commit sent is HEAD. --project P compiles into P (default: the agent's current project).

--exclude PATTERN
            leaves out the files PATTERN matches (.gitignore syntax), after the defaults and
            .cairnignore; repeatable
--dry-run   prints each unit that would be sent (status, kind, sha, path, symbol) and the paths
            that would be pruned, asking the server only what is fresh; it writes nothing, and
            without a server it lists every unit
--json      prints the counts (with --dry-run, the units that would be sent) as JSON
--install-hook
            writes a post-commit hook (where git looks: core.hooksPath is respected) that runs
            \`cairn compile\` in the background after each commit and always exits 0; it rewrites
            a hook it wrote, and refuses to touch any other, printing the line to add to it

It acts as CAIRN_AGENT_ID with CAIRN_API_KEY (or CAIRN_KEY_FILE), or as the agent onboarding
connected to the directory, or else as the owner of the server using DATA_DIR, through the server
at CAIRN_URL (default http://127.0.0.1:8470).`;
