// The web UI declares the API's records by hand (its build has neither zod nor Node types). These
// assertions tie each declaration to the catalogue's output schema: when a record changes on the
// server and not in ui/src/types.ts, `npm run typecheck` fails here.
import { describe, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type * as agents from "../../tools/agents.js";
import type * as graph from "../../tools/graph.js";
import type * as logs from "../../tools/logs.js";
import type * as wire from "../../tools/schemas.js";
import type * as sessions from "../../tools/sessions.js";
import type * as ui from "../../ui/src/types.js";
import type * as uiArchivist from "../../ui/src/archivist-status.js";
import type * as archivist from "../../src/services/archivist.js";

type Out<T extends z.ZodType> = z.output<T>;

describe("the web UI's record types", () => {
  it("match the catalogue's output schemas", () => {
    // `embedding` is asked for only by the archivist (include_embedding); the UI never reads it.
    expectTypeOf<ui.MemoryEntry>().toEqualTypeOf<Omit<Out<typeof wire.memoryEntry>, "embedding">>();
    expectTypeOf<ui.SearchHit>().toEqualTypeOf<Omit<Out<typeof wire.searchHit>, "embedding">>();
    expectTypeOf<ui.MemoryWriteResult>().toEqualTypeOf<Omit<Out<typeof wire.memoryWriteResult>, "embedding">>();
    expectTypeOf<ui.Agent>().toEqualTypeOf<Out<typeof wire.agentRecord>>();
    expectTypeOf<ui.Project>().toEqualTypeOf<Out<typeof wire.project>>();
    expectTypeOf<ui.Task>().toEqualTypeOf<Out<typeof wire.task>>();
    expectTypeOf<ui.TaskComment>().toEqualTypeOf<Out<typeof wire.taskComment>>();
    expectTypeOf<ui.Message>().toEqualTypeOf<Out<typeof wire.message>>();
    expectTypeOf<ui.CairnEvent>().toEqualTypeOf<Out<typeof wire.eventRecord>>();
    expectTypeOf<ui.Registration>().toEqualTypeOf<Out<typeof agents.registration>>();
    expectTypeOf<ui.Handoff>().toEqualTypeOf<Out<typeof sessions.handoff>>();
    expectTypeOf<ui.LogEntry>().toEqualTypeOf<Out<typeof logs.logEntry>>();
    expectTypeOf<ui.GraphEdge>().toEqualTypeOf<Out<typeof graph.edge>>();
    expectTypeOf<uiArchivist.ArchivistStatus>().toEqualTypeOf<archivist.ArchivistStatus>();
  });
});
