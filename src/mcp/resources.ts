import { createHash, randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Caller, OperationGateway } from "../../tools/gateway.js";
import { InternalError } from "../core/errors.js";
import { ProtocolError, RESOURCE_NOT_FOUND, unknownName } from "./protocol-errors.js";

/** A resource is an operation's answer, read for the session's agent. */
const RESOURCES = [
  {
    uri: "cairn://inbox",
    name: "inbox",
    description: "Your unread messages, oldest first (up to 50). Subscribe to be told when a message arrives or is read.",
    operation: "message_inbox",
    input: { limit: 50 },
    // Event types after which the resource may read differently.
    changedBy: ["message.received", "message.read"],
  },
  {
    uri: "cairn://directives",
    name: "directives",
    description: "The standing directives you must follow: global, then your projects', then your own.",
    operation: "memory_directives",
    input: {},
    changedBy: ["memory.written", "memory.updated", "memory.deleted", "project.joined", "project.left"],
  },
  {
    uri: "cairn://handoff",
    name: "handoff",
    description: "Your session pack without moving your memory cursor: last handoff, memory changes, unread messages, claimed tasks, directives.",
    operation: "session_start",
    input: { peek: true },
    changedBy: ["session.handoff_saved", "message.received", "message.read", "task.claimed", "task.completed", "task.failed", "task.unclaimed", "memory.written", "memory.updated", "memory.deleted"],
  },
] as const;

const PROMPTS = {
  start_session: {
    description: "Start a work session with Cairn: load the context pack and follow it.",
    text: `Call the session_start tool now. Read the result before doing anything else:
- follow every directive in it;
- continue from last_handoff (its next_steps and in_progress);
- look through memory_delta_since_last_seen for what teammates changed, and answer unread_messages that need it;
- you still hold the tasks in claimed_tasks: finish them or release them with task_unclaim.
Then search memory (memory_search) before starting on anything new.`,
  },
  end_session: {
    description: "End a work session: record what you learned and hand off.",
    text: `Before you stop:
1. memory_write anything you learned that a teammate would need (facts, fixes) and has not been written yet; decision_record the choices you made that others should build on.
2. Complete, fail or release (task_unclaim) every task you hold.
3. Call session_handoff with a summary of this session, in_progress (the task ids still open) and next_steps for whoever continues.`,
  },
} as const;

type ResourceUri = (typeof RESOURCES)[number]["uri"];

/**
 * The resources and prompts of one MCP session. Subscriptions are kept per session; after an
 * event that may change a subscribed resource, it is read again for the session's agent and
 * `resources/updated` is sent only when what that agent sees actually changed — so nobody learns
 * of activity it could not see.
 */
export class SessionResources {
  private readonly subscribed = new Map<ResourceUri, string>();
  private pending = new Set<ResourceUri>();
  private timer: NodeJS.Timeout | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly gateway: OperationGateway,
    private readonly server: Server,
    private readonly caller: () => Caller,
  ) {
    server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: RESOURCES.map(({ uri, name, description }) => ({ uri, name, description, mimeType: "application/json" })),
    }));
    // Every resource has a fixed URI: there are no templates, but the resources capability promises the list.
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
      contents: [{ uri: request.params.uri, mimeType: "application/json", text: await this.read(this.resource(request.params.uri).uri) }],
    }));
    server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      const { uri } = this.resource(request.params.uri);
      this.subscribed.set(uri, digest(await this.read(uri)));
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      this.subscribed.delete(this.resource(request.params.uri).uri);
      return {};
    });
    server.setRequestHandler(ListPromptsRequestSchema, () => ({
      prompts: Object.entries(PROMPTS).map(([name, prompt]) => ({ name, description: prompt.description })),
    }));
    server.setRequestHandler(GetPromptRequestSchema, (request) => {
      const { name } = request.params;
      // Own keys only: `constructor` or `toString` name no prompt.
      if (!Object.hasOwn(PROMPTS, name)) throw unknownName("prompt", name);
      const prompt = PROMPTS[name as keyof typeof PROMPTS];
      return { description: prompt.description, messages: [{ role: "user", content: { type: "text", text: prompt.text } }] };
    });
    this.unsubscribe = gateway.onEvent((event) => {
      for (const resource of RESOURCES) {
        if (this.subscribed.has(resource.uri) && (resource.changedBy as readonly string[]).includes(event.type)) this.pending.add(resource.uri);
      }
      // Once per burst of events, after their transaction's other hooks.
      if (this.pending.size > 0 && this.timer === null) this.timer = setTimeout(() => void this.recheck(), 20);
    });
  }

  private resource(uri: string): (typeof RESOURCES)[number] {
    const found = RESOURCES.find((resource) => resource.uri === uri);
    if (!found) throw new ProtocolError(RESOURCE_NOT_FOUND, "resource not found", { uri });
    return found;
  }

  private async read(uri: ResourceUri): Promise<string> {
    const resource = this.resource(uri);
    const operation = this.gateway.operations.find((candidate) => candidate.name === resource.operation);
    if (!operation) throw new InternalError("invariant", `no operation ${resource.operation}`);
    const outcome = await this.gateway.invoke(operation, { caller: this.caller(), input: operation.input.parse(resource.input), requestId: randomUUID() });
    return JSON.stringify(outcome.body);
  }

  private async recheck(): Promise<void> {
    this.timer = null;
    const uris = [...this.pending];
    this.pending = new Set();
    for (const uri of uris) {
      const before = this.subscribed.get(uri);
      if (before === undefined) continue;
      try {
        const now = digest(await this.read(uri));
        if (now === before) continue;
        this.subscribed.set(uri, now);
        await this.server.sendResourceUpdated({ uri });
      } catch {
        // The session may be closing, or the agent gone: nothing to tell.
      }
    }
  }

  close(): void {
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    this.subscribed.clear();
  }
}

const digest = (text: string): string => createHash("sha256").update(text).digest("hex");
