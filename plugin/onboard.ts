import { configMergeProgram } from "./config-merge/program.js";
import { HOSTS } from "./hosts/index.js";
import { shellWord, type HostRenderer } from "./hosts/types.js";

export interface OnboardContext {
  url: string;
  /** A valid project id, or null. */
  project: string | null;
  /** The host whose configuration the script writes; null: the script detects it. */
  host: string | null;
  /** The agent id asked for (`?agent=`); null: the script derives one per user, machine and directory. */
  agent: string | null;
  /** The server's own bridge launcher (node and cli.js): used when the script runs on the server's machine. */
  serverLauncher: string[];
}

/** How the script recognises a host on the machine, in order; claude-code when nothing matches. */
const DETECT: { host: string; test: string }[] = [
  { host: "claude-code", test: "command -v claude >/dev/null 2>&1" },
  { host: "cursor", test: "[ -d .cursor ] || command -v cursor >/dev/null 2>&1" },
  { host: "codex", test: "command -v codex >/dev/null 2>&1" },
  { host: "gemini", test: "command -v gemini >/dev/null 2>&1" },
  { host: "opencode", test: "command -v opencode >/dev/null 2>&1" },
  { host: "windsurf", test: "[ -d \"$HOME/.codeium/windsurf\" ]" },
  { host: "vscode", test: "[ -d .vscode ] || command -v code >/dev/null 2>&1" },
];

/** A shell expression for a config path: a `~/` path is under $HOME, the rest is quoted as is. */
const configPath = (path: string): string => (path.startsWith("~/") ? `"$HOME"/${shellWord(path.slice(2))}` : shellWord(path));

// The functions are not indented: a here-document's end marker must start its line.
// Placeholders the script replaces with the values it settles on (JSON- and TOML-escaped). None
// needs escaping itself, in any of the formats, and none can occur in a real configuration.
const AGENT = "cairn-onboard-agent-placeholder";
const KEY_FILE = "cairn-onboard-key-file-placeholder";
const LAUNCH = ["cairn-onboard-launch-0-placeholder", "cairn-onboard-launch-1-placeholder"];
const END_OF_FILE = "CAIRN_ONBOARD_END_OF_CONFIG";
const END_OF_PROGRAM = "CAIRN_ONBOARD_END_OF_MERGE";

/** One configuration as a shell function that prints it with the placeholders filled in. */
function writer(name: string, content: string): string {
  return `${name}() {
  sed -e "s|${AGENT}|$AGENT_ID|g" -e "s|${KEY_FILE}|$KEY_FILE_SED|g" -e "s|${LAUNCH[0]}|$LAUNCH0_SED|g" -e "s|${LAUNCH[1]}|$LAUNCH1_SED|g" <<'${END_OF_FILE}'
${content.trimEnd()}
${END_OF_FILE}
}`;
}

/** Where Cairn's entry goes in the host's file, said for a person adding it by hand. */
function entryPlace(renderer: HostRenderer, content: string): string {
  if (renderer.syntax === "toml") return "as a table of its own";
  const rendered = JSON.parse(content) as Record<string, unknown>;
  const container = Object.keys(rendered).find((key) => typeof rendered[key] === "object" && rendered[key] !== null && "cairn" in rendered[key]);
  return `in its "${container}" object`;
}

/**
 * The host's three configurations: stdio through an installed `cairn` (two-word launcher), stdio
 * through the server's own node and cli.js (three words), and HTTP when neither is on this machine.
 */
function hostCase(renderer: HostRenderer, url: string): string {
  const base = { agentId: AGENT, url, keyVariable: "CAIRN_API_KEY" };
  const file = (launcher: string[], transport: "stdio" | "http", keyFile?: string) => {
    const rendered = renderer.render({ ...base, launcher, ...(keyFile ? { keyFile } : {}) }, transport);
    return rendered.files;
  };
  const viaCairn = file([LAUNCH[0] as string, "mcp"], "stdio", KEY_FILE);
  const viaServer = file([LAUNCH[0] as string, LAUNCH[1] as string, "mcp"], "stdio", KEY_FILE);
  const viaHttp = file([LAUNCH[0] as string, "mcp"], "http");
  // A host that reads another path on macOS lists that one first.
  const paths = viaCairn.map((entry) => entry.path);
  const pathChoice =
    paths.length > 1 ? `if [ "$(uname -s)" = Darwin ]; then CONFIG_PATH=${configPath(paths[0] as string)}; else CONFIG_PATH=${configPath(paths[1] as string)}; fi` : `CONFIG_PATH=${configPath(paths[0] as string)}`;
  return `  ${shellWord(renderer.host)})
    ${pathChoice}
    CONFIG_SYNTAX=${shellWord(renderer.syntax)}; ENTRY_PLACE=${shellWord(entryPlace(renderer, viaCairn[0]?.content ?? "{}"))}
${[writer("write_cairn", viaCairn[0]?.content ?? ""), writer("write_server", viaServer[0]?.content ?? ""), writer("write_http", viaHttp[0]?.content ?? "")].join("\n")}
    ;;`;
}

/**
 * A POSIX sh script that connects an agent host in this directory to Cairn: it registers an agent
 * for this user, machine and directory (or reuses the key it stored before), keeps the key in a
 * 0600 file, records the directory's agent, joins the project, and writes the host's MCP
 * configuration — or, when the host's file exists, merges Cairn's entry into it (see
 * config-merge/), or prints the entry to add by hand. The configuration runs the bridge by absolute path
 * and points it at the key file, so nothing has to be exported. Every value from the request is a
 * single-quoted shell word and every configuration a quoted here-document: nothing the server
 * interpolates is ever evaluated by the shell. Running it again changes nothing.
 */
export function onboardScript(context: OnboardContext): string {
  const program = configMergeProgram();
  // A quoted here-document ends at its marker line, so the program must not hold one.
  if (program.split("\n").includes(END_OF_PROGRAM)) throw new Error("the merge program holds its own end marker");
  const renderers = context.host === null ? HOSTS : HOSTS.filter((renderer) => renderer.host === context.host);
  if (renderers.length === 0) throw new Error(`unknown host ${context.host}`);
  const detection = DETECT.map(({ host, test }) => `  if ${test}; then HOST=${shellWord(host)}; fi`).reverse().join("\n");
  const [serverNode = "", serverCli = ""] = context.serverLauncher;
  return `#!/bin/sh
# Connects an agent host (${context.host ?? "detected"}) in this directory to the Cairn server at ${context.url}.
# Options: --agent ID (default: user-machine-directory), --host HOST.
# Safe to run again: it reuses the stored key, and adds its entry to an existing configuration
# (keeping everything else, and a backup beside it) only when that changes something.
set -eu
umask 077

CAIRN_URL=${shellWord(context.url)}
PROJECT=${shellWord(context.project ?? "")}
HOST=${shellWord(context.host ?? "")}
AGENT_ID=${shellWord(context.agent ?? "")}
SERVER_NODE=${shellWord(serverNode)}
SERVER_CLI=${shellWord(serverCli)}
CAIRN_DIR="\${CAIRN_DIR:-$HOME/.cairn}"

while [ $# -gt 0 ]; do
  case "$1" in
    --agent) AGENT_ID=\${2:-}; shift 2 ;;
    --agent=*) AGENT_ID=\${1#--agent=}; shift ;;
    --host) HOST=\${2:-}; shift 2 ;;
    --host=*) HOST=\${1#--host=}; shift ;;
    *) echo "cairn onboard: unknown option $1" >&2; exit 2 ;;
  esac
done

command -v curl >/dev/null 2>&1 || { echo "cairn onboard: curl is required" >&2; exit 1; }
DIR=$(pwd -P)
case "$DIR" in *"$(printf '\\t')"*|*"
"*) echo "cairn onboard: this directory's path holds a tab or a newline" >&2; exit 1 ;; esac

# The agent: --agent, CAIRN_AGENT_ID, or one per user, machine and directory, reduced to what an id may hold.
[ -n "$AGENT_ID" ] || AGENT_ID=\${CAIRN_AGENT_ID:-}
[ -n "$AGENT_ID" ] || AGENT_ID=$(printf '%s-%s-%s' "$(id -un 2>/dev/null || echo agent)" "$(hostname 2>/dev/null || echo host)" "$(basename "$DIR")")
AGENT_ID=$(printf '%s' "$AGENT_ID" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9_-' '-' | sed 's/^[^a-z0-9]*//' | cut -c1-64)
[ -n "$AGENT_ID" ] || { echo "cairn onboard: give an agent id with --agent" >&2; exit 1; }
mkdir -p "$CAIRN_DIR/agents"
KEY_FILE="$CAIRN_DIR/agents/$AGENT_ID.key"

if [ -s "$KEY_FILE" ]; then
  echo "cairn onboard: reusing the key of $AGENT_ID in $KEY_FILE"
else
  BODY=$(printf '{"agent_id":"%s"}' "$AGENT_ID")
  if [ -n "\${CAIRN_REGISTRATION_KEY:-}" ]; then
    ANSWER=$(curl -sS -w '\\n%{http_code}' -X POST "$CAIRN_URL/agents/self-register" -H 'content-type: application/json' -H "x-registration-key: $CAIRN_REGISTRATION_KEY" -d "$BODY")
  else
    ANSWER=$(curl -sS -w '\\n%{http_code}' -X POST "$CAIRN_URL/agents/self-register" -H 'content-type: application/json' -d "$BODY")
  fi
  STATUS=$(printf '%s\\n' "$ANSWER" | tail -n 1)
  if [ "$STATUS" != "201" ]; then
    echo "cairn onboard: registering $AGENT_ID failed ($STATUS): $(printf '%s\\n' "$ANSWER" | sed '$d')" >&2
    echo "cairn onboard: a taken id needs its key in $KEY_FILE, or another id (--agent)" >&2
    exit 1
  fi
  KEY=$(printf '%s\\n' "$ANSWER" | sed -n 's/.*"api_key":"\\([^"]*\\)".*/\\1/p')
  [ -n "$KEY" ] || { echo "cairn onboard: no key in the answer" >&2; exit 1; }
  printf '%s\\n' "$KEY" > "$KEY_FILE"
  chmod 600 "$KEY_FILE"
  echo "cairn onboard: registered $AGENT_ID; its key is in $KEY_FILE"
fi
CAIRN_API_KEY=$(cat "$KEY_FILE")

auth() { curl -sS -o /dev/null -w '%{http_code}' -H "X-Agent-ID: $AGENT_ID" -H "X-API-Key: $CAIRN_API_KEY" "$@"; }
[ "$(auth "$CAIRN_URL/agents/me")" = "200" ] || { echo "cairn onboard: the server refused the key in $KEY_FILE" >&2; exit 1; }

# This directory's agent, for cairn mcp and the Claude Code plugin's hooks (a later line wins).
printf '%s\\t%s\\t%s\\t%s\\n' "$DIR" "$AGENT_ID" "$CAIRN_URL" "$KEY_FILE" >> "$CAIRN_DIR/connections.tsv"
chmod 600 "$CAIRN_DIR/connections.tsv"

if [ -n "$PROJECT" ]; then
  STATUS=$(auth -X POST "$CAIRN_URL/projects/$PROJECT/join")
  if [ "$STATUS" = "404" ]; then
    STATUS=$(auth -X POST "$CAIRN_URL/projects" -H 'content-type: application/json' -d "{\\"name\\":\\"$PROJECT\\"}")
  fi
  case "$STATUS" in 200|201) echo "cairn onboard: joined project $PROJECT" ;; *) echo "cairn onboard: joining $PROJECT failed ($STATUS)" >&2; exit 1 ;; esac
fi

# How the host starts the bridge, by absolute path: an installed cairn, else the server's own
# when it runs on this machine, else no bridge here and the host talks HTTP.
LAUNCH0=; LAUNCH1=; WRITE=write_http
CAIRN_BIN=$(command -v cairn 2>/dev/null || true)
case "$CAIRN_BIN" in /*) ;; ?*) CAIRN_BIN="$(pwd -P)/$CAIRN_BIN" ;; esac
if [ -n "$CAIRN_BIN" ] && "$CAIRN_BIN" mcp --help 2>/dev/null | grep -q 'MCP server on stdin'; then
  LAUNCH0=$CAIRN_BIN; WRITE=write_cairn
elif [ -x "$SERVER_NODE" ] && [ -f "$SERVER_CLI" ]; then
  LAUNCH0=$SERVER_NODE; LAUNCH1=$SERVER_CLI; WRITE=write_server
fi
# Values go into JSON or TOML strings, through sed: escape for both, in that order.
escape() { printf '%s' "$1" | sed -e 's/[\\\\"]/\\\\&/g' -e 's/[|&\\\\]/\\\\&/g'; }
KEY_FILE_SED=$(escape "$KEY_FILE"); LAUNCH0_SED=$(escape "$LAUNCH0"); LAUNCH1_SED=$(escape "$LAUNCH1")

if [ -z "$HOST" ]; then
  HOST=claude-code
${detection}
fi
case "$HOST" in
${renderers.map((renderer) => hostCase(renderer, context.url)).join("\n")}
  *) echo "cairn onboard: unknown host $HOST" >&2; exit 1 ;;
esac

# Cairn's entry alone, as a person would add it: a JSON configuration's "cairn" member, or the TOML table.
print_entry() {
  if [ "$CONFIG_SYNTAX" = toml ]; then "$WRITE"; else "$WRITE" | sed -n '/^    "cairn": /,/^    }/s/^    //p'; fi
}
by_hand() {
  echo "cairn onboard: to connect $HOST as $AGENT_ID, add this to $CONFIG_PATH yourself, $ENTRY_PLACE:" >&2
  print_entry >&2
  exit 1
}

# A configuration that exists gets Cairn's entry merged in by a node program (carried here, as
# text) that keeps everything else byte for byte and the original beside it; one it cannot read
# is left alone. The server's node when the bridge is the server's, else the one on the PATH.
if [ -e "$CONFIG_PATH" ]; then
  MERGE_NODE=$SERVER_NODE
  [ "$WRITE" = write_server ] || MERGE_NODE=$(command -v node 2>/dev/null || true)
  if [ -z "$MERGE_NODE" ]; then
    echo "cairn onboard: $CONFIG_PATH exists, and adding to it takes node, which is not on this machine; it is left as it is" >&2
    by_hand
  fi
  "$MERGE_NODE" - "$CONFIG_PATH" "$CONFIG_SYNTAX" "$("$WRITE")" "$HOST as $AGENT_ID" <<'${END_OF_PROGRAM}' || by_hand
${program.trimEnd()}
${END_OF_PROGRAM}
else
  mkdir -p "$(dirname "$CONFIG_PATH")"
  "$WRITE" > "$CONFIG_PATH"
  echo "cairn onboard: wrote $CONFIG_PATH for $HOST as $AGENT_ID"
fi
if [ "$WRITE" = write_http ]; then
  echo "cairn onboard: no cairn on this machine, so $HOST connects over HTTP: export CAIRN_API_KEY=\\"\\$(cat '$KEY_FILE')\\" where it starts, or install cairn and run this again"
fi
`;
}
