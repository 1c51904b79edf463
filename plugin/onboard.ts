import { HOSTS } from "./hosts/index.js";
import { shellWord } from "./hosts/types.js";

export interface OnboardContext {
  url: string;
  /** A valid project id, or null. */
  project: string | null;
  /** The host whose configuration the script writes; null: the script detects it. */
  host: string | null;
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

/** Replaced in the rendered configuration by the agent id the script settles on. */
const AGENT_PLACEHOLDER = "cairn-onboard-agent-placeholder";
const END_OF_FILE = "CAIRN_ONBOARD_END_OF_CONFIG";

/**
 * A POSIX sh script that connects this machine's agent host to Cairn: it registers an agent (or
 * reuses the key it stored before), keeps the key in a 0600 file, joins the project, and writes the
 * host's MCP configuration unless one is there already. Every value from the request is a
 * single-quoted shell word, and the configuration is a quoted here-document: nothing the server
 * interpolates is ever evaluated by the shell. Running it again changes nothing.
 */
export function onboardScript(context: OnboardContext): string {
  const configs = HOSTS.map((renderer) => {
    const config = renderer.render({ agentId: AGENT_PLACEHOLDER, url: context.url, keyVariable: "CAIRN_API_KEY" }, "stdio");
    const file = config.files[0];
    if (!file) throw new Error(`host ${renderer.host} renders no file`);
    return { host: renderer.host, file };
  });
  if (context.host !== null && !configs.some((config) => config.host === context.host)) throw new Error(`unknown host ${context.host}`);
  const detection = DETECT.map(({ host, test }) => `  if ${test}; then HOST=${shellWord(host)}; fi`).reverse().join("\n");
  const writers = configs
    .map(
      ({ host, file }) => `  ${shellWord(host)})
    CONFIG_PATH=${configPath(file.path)}
    write_config() {
      sed "s/${AGENT_PLACEHOLDER}/$AGENT_ID/g" > "$1" <<'${END_OF_FILE}'
${file.content.trimEnd()}
${END_OF_FILE}
    }
    ;;`,
    )
    .join("\n");
  return `#!/bin/sh
# Connects this machine's agent host (${context.host ?? "detected"}) to the Cairn server at ${context.url}.
# Safe to run again: it reuses the stored key and leaves an existing configuration alone.
set -eu
umask 077

CAIRN_URL=${shellWord(context.url)}
PROJECT=${shellWord(context.project ?? "")}
HOST=${shellWord(context.host ?? "")}
CAIRN_DIR="\${CAIRN_DIR:-$HOME/.cairn}"

command -v curl >/dev/null 2>&1 || { echo "cairn onboard: curl is required" >&2; exit 1; }

# The agent id: CAIRN_AGENT_ID, or user-host, reduced to what an id may hold.
if [ -n "\${CAIRN_AGENT_ID:-}" ]; then
  AGENT_ID=$CAIRN_AGENT_ID
else
  AGENT_ID=$(printf '%s-%s' "$(id -un 2>/dev/null || echo agent)" "$(hostname 2>/dev/null || echo host)")
fi
AGENT_ID=$(printf '%s' "$AGENT_ID" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9_-' '-' | sed 's/^[^a-z0-9]*//' | cut -c1-64)
[ -n "$AGENT_ID" ] || { echo "cairn onboard: set CAIRN_AGENT_ID" >&2; exit 1; }
KEY_FILE="$CAIRN_DIR/agent-$AGENT_ID.key"

mkdir -p "$CAIRN_DIR"
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
    echo "cairn onboard: a taken id needs its key in $KEY_FILE, or another CAIRN_AGENT_ID" >&2
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

if [ -n "$PROJECT" ]; then
  STATUS=$(auth -X POST "$CAIRN_URL/projects/$PROJECT/join")
  if [ "$STATUS" = "404" ]; then
    STATUS=$(auth -X POST "$CAIRN_URL/projects" -H 'content-type: application/json' -d "{\\"name\\":\\"$PROJECT\\"}")
  fi
  case "$STATUS" in 200|201) echo "cairn onboard: joined project $PROJECT" ;; *) echo "cairn onboard: joining $PROJECT failed ($STATUS)" >&2; exit 1 ;; esac
fi

if [ -z "$HOST" ]; then
  HOST=claude-code
${detection}
fi
case "$HOST" in
${writers}
  *) echo "cairn onboard: unknown host $HOST" >&2; exit 1 ;;
esac

if [ -e "$CONFIG_PATH" ]; then
  if grep -q cairn "$CONFIG_PATH"; then
    echo "cairn onboard: $CONFIG_PATH already configures cairn; left as it is"
  else
    echo "cairn onboard: $CONFIG_PATH exists; add the cairn server to it (GET /plugin/install shows it)" >&2
  fi
else
  mkdir -p "$(dirname "$CONFIG_PATH")"
  write_config "$CONFIG_PATH"
  echo "cairn onboard: wrote $CONFIG_PATH for $HOST"
fi
echo "cairn onboard: export CAIRN_API_KEY=\\"\\$(cat '$KEY_FILE')\\" in the shell that starts $HOST"
`;
}
