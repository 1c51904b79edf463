import { agentOperations } from "./agents.js";
import { eventOperations } from "./events.js";
import { healthOperations } from "./health.js";
import { memoryOperations } from "./memory.js";
import type { Operation } from "./operation.js";

/** Every operation Cairn offers. REST routes, MCP tools and the OpenAPI document all come from here. */
export const catalogue: readonly Operation[] = [...memoryOperations, ...agentOperations, ...eventOperations, ...healthOperations];
