import { agent, agentHelp } from "./cli/agent.js";
import { printError, UsageError, print } from "./cli/common.js";
import { backup, backupHelp, doctor, doctorHelp, reindex, reindexHelp } from "./cli/maintenance.js";
import { serve, serveHelp } from "./cli/serve.js";
import { packageVersion } from "./core/paths.js";

const help = `usage: cairn <command> [options]

commands:
  serve               run the server (REST, /docs, /openapi.json)
  agent add ID        create an agent and print its key once
  agent rotate-key ID issue a new key for an agent
  backup FILE         consistent online copy of the database
  reindex             re-embed every entry with the configured model
  doctor              check configuration, permissions, database and model

Each command takes --help. Settings are environment variables (see README.md).`;

const helps: Record<string, string> = { serve: serveHelp, agent: agentHelp, backup: backupHelp, reindex: reindexHelp, doctor: doctorHelp };

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    print(help);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version") {
    print(packageVersion);
    return 0;
  }
  if (args.includes("--help") || args.includes("-h")) {
    const text = helps[command];
    if (!text) throw new UsageError(`unknown command ${command}\n\n${help}`);
    print(text);
    return 0;
  }
  switch (command) {
    case "serve":
      await serve();
      return -1;
    case "agent":
      await agent(args);
      return 0;
    case "backup":
      await backup(args);
      return 0;
    case "reindex":
      await reindex();
      return 0;
    case "doctor":
      return (await doctor()) ? 0 : 1;
    default:
      throw new UsageError(`unknown command ${command}\n\n${help}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // -1: a long-running command that exits on its own (serve).
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      printError(`cairn: ${error.message}`);
      process.exit(2);
    }
    printError(`cairn: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
