import { configOrExit, withGateway } from "./common.js";
import { print } from "./output.js";

/** `cairn ui-link`: a one-time web UI sign-in link, written to the server's database. */
export async function uiLink(): Promise<void> {
  const config = configOrExit();
  const link = await withGateway(config, { embeddings: false }, (gateway) => gateway.maintenance.issueLoginLink());
  print(`${config.PUBLIC_URL}/ui/#login=${link.token}`);
  print(`works once, until ${link.expires_at}`);
}
