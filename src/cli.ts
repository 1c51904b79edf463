import { agentHelp, archivistHelp, backupHelp, compileHelp, doctorHelp, exportHelp, importHelp, mcpHelp, migrateStoreHelp, reindexHelp, searchHelp, serveHelp, statusHelp, stopHelp, uiLinkHelp } from "./cli/help.js";
import { print, printError, UsageError } from "./cli/output.js";
import { exitWhenSettled } from "./core/exit.js";
import { packageVersion } from "./core/paths.js";

const help = `usage: cairn <command> [options]

commands:
  serve               run the server (REST, /mcp, /docs, /openapi.json)
  archivist           the archivist agent on its own, against the server at CAIRN_URL
  mcp                 MCP over stdio for an agent host, bridging to the server at CAIRN_URL
  status              whether a server answers at CAIRN_URL, and the one running for DATA_DIR
  stop                stop the server running for DATA_DIR
  agent add ID        create an agent and print its key once
  agent rotate-key ID issue a new key for an agent
  agent list          list the server's agents
  search QUERY        search memory as the owner
  compile [PATH...]   send the repository's code units to memory (hashes and descriptions, never source)
  export              JSON Lines of everything shared, to standard output
  import FILE         import an export or a memory.json
  ui-link             print a one-time sign-in link for the web UI
  backup FILE         consistent online copy of the database (SQLite)
  migrate-store       copy a SQLite store into an empty PostgreSQL one
  reindex             re-embed every entry with the configured model
  doctor              check configuration, permissions, database and model

Each command takes --help. Settings are environment variables (see README.md).`;

interface Command {
  help: string;
  /** Resolves to the exit code, or -1 for a long-running command that exits on its own. */
  run(args: string[]): Promise<number>;
}

// Each command loads its modules only when it runs, so help and usage errors answer at once.
const commands: Record<string, Command> = {
  serve: {
    help: serveHelp,
    run: async () => {
      await (await import("./cli/serve.js")).serve();
      return -1;
    },
  },
  mcp: {
    help: mcpHelp,
    run: async () => {
      await (await import("./cli/mcp.js")).mcp();
      return 0;
    },
  },
  status: {
    help: statusHelp,
    run: async () => ((await (await import("./cli/control.js")).status()) ? 0 : 1),
  },
  stop: {
    help: stopHelp,
    run: async () => ((await (await import("./cli/control.js")).stop()) ? 0 : 1),
  },
  archivist: {
    help: archivistHelp,
    run: async () => {
      await (await import("./cli/archivist.js")).archivist();
      return 0;
    },
  },
  agent: {
    help: agentHelp,
    run: async (args) => {
      if (args[0] === "list") await (await import("./cli/agent-list.js")).agentList(args.slice(1));
      else await (await import("./cli/agent.js")).agent(args);
      return 0;
    },
  },
  search: {
    help: searchHelp,
    run: async (args) => {
      await (await import("./cli/search.js")).search(args);
      return 0;
    },
  },
  compile: {
    help: compileHelp,
    run: async (args) => {
      // Loads web-tree-sitter and the grammars: no other command does.
      await (await import("./cli/compile/command.js")).compile(args);
      return 0;
    },
  },
  export: {
    help: exportHelp,
    run: async (args) => {
      await (await import("./cli/transfer.js")).exportCommand(args);
      return 0;
    },
  },
  import: {
    help: importHelp,
    run: async (args) => ((await (await import("./cli/transfer.js")).importCommand(args)) ? 0 : 1),
  },
  "ui-link": {
    help: uiLinkHelp,
    run: async () => {
      await (await import("./cli/ui-link.js")).uiLink();
      return 0;
    },
  },
  backup: {
    help: backupHelp,
    run: async (args) => {
      await (await import("./cli/maintenance.js")).backup(args);
      return 0;
    },
  },
  "migrate-store": {
    help: migrateStoreHelp,
    run: async (args) => {
      await (await import("./cli/migrate-store.js")).migrateStore(args);
      return 0;
    },
  },
  reindex: {
    help: reindexHelp,
    run: async () => {
      await (await import("./cli/maintenance.js")).reindex();
      return 0;
    },
  },
  doctor: {
    help: doctorHelp,
    run: async () => ((await (await import("./cli/maintenance.js")).doctor()) ? 0 : 1),
  },
};

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    print(help);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version") {
    print(packageVersion);
    return 0;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command ${name}\n\n${help}`);
  if (args.includes("--help") || args.includes("-h")) {
    print(command.help);
    return 0;
  }
  return command.run(args);
}

/** node:util parseArgs's refusals (an unknown option, a missing value): a usage error like ours. */
function isArgumentError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) void exitWhenSettled(code);
  },
  (error: unknown) => {
    printError(`cairn: ${error instanceof Error ? error.message : String(error)}`);
    void exitWhenSettled(error instanceof UsageError || isArgumentError(error) ? 2 : 1);
  },
);
