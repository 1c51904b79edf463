import { configOrExit, withGateway } from "./common.js";
import { print } from "./output.js";
import { runningServerUrl } from "./pidfile.js";

/**
 * `cairn ui-link`: a one-time web UI sign-in link, written to the server's database. The link is
 * for the server of that database: PUBLIC_URL when it is set, else the address of the server
 * running for DATA_DIR (which HOST and PORT left at their defaults would miss), else HOST and PORT's.
 */
export async function uiLink(): Promise<void> {
  const config = configOrExit();
  const link = await withGateway(config, { embeddings: false }, (gateway) => gateway.maintenance.issueLoginLink());
  const base = (process.env.PUBLIC_URL ?? "") === "" ? (runningServerUrl(config.DATA_DIR) ?? config.PUBLIC_URL) : config.PUBLIC_URL;
  print(`${base}/ui/#login=${link.token}`);
  print(`works once, until ${link.expires_at}`);
}
