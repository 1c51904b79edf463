import { adminOperations } from "./admin.js";
import { agentOperations } from "./agents.js";
import { archivistOperations } from "./archivist.js";
import { blueprintOperations } from "./blueprints.js";
import { captureOperations } from "./captures.js";
import { compileOperations } from "./compile.js";
import { decisionOperations } from "./decisions.js";
import { feedOperations } from "./feeds.js";
import { meshSyncOperations } from "./mesh-sync.js";
import { graphOperations } from "./graph.js";
import { knowledgeOperations } from "./knowledge.js";
import { logOperations } from "./logs.js";
import { eventOperations } from "./events.js";
import { onboardOperations } from "./onboard.js";
import { pluginOperations } from "./plugin.js";
import { healthOperations } from "./health.js";
import { memoryOperations } from "./memory.js";
import { memoryFeedOperations } from "./memory-feed.js";
import { meshOperations } from "./mesh.js";
import { messageOperations } from "./messages.js";
import { meshDiscoveryOperations } from "./mesh-discovery.js";
import { oauthOperations } from "./oauth.js";
import type { Operation } from "./operation.js";
import { projectOperations } from "./projects.js";
import { sessionOperations } from "./sessions.js";
import { taskOperations } from "./tasks.js";

const operations = [
  // Before memory's: `/memory/central` is not an entry id.
  ...knowledgeOperations,
  ...memoryOperations,
  ...memoryFeedOperations,
  ...projectOperations,
  ...taskOperations,
  ...decisionOperations,
  ...captureOperations,
  ...feedOperations,
  ...meshSyncOperations,
  ...meshOperations,
  ...meshDiscoveryOperations,
  ...oauthOperations,
  ...blueprintOperations,
  ...compileOperations,
  ...messageOperations,
  ...sessionOperations,
  ...agentOperations,
  ...eventOperations,
  ...graphOperations,
  ...archivistOperations,
  ...logOperations,
  ...adminOperations,
  ...pluginOperations,
  ...onboardOperations,
  ...healthOperations,
];

/** Every operation Cairn offers. REST routes, MCP tools and the OpenAPI document all come from here. */
export const catalogue: readonly Operation[] = operations;

/** Each operation by its name, its kind and schemas kept as types: what the typed client (`src/client/operations.ts`) reads. */
export type Operations = { [Op in (typeof operations)[number] as Op["name"]]: Op };
