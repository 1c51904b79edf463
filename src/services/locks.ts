// Every advisory lock a service takes (`tx.lock`), named once. On PostgreSQL each is held from the
// moment it is taken until the transaction ends; on SQLite, whose one writer runs one transaction
// at a time, they cost nothing. docs/architecture.md lists the rule each one keeps.
//
// Order: a transaction takes them in the order they are listed here, and takes the events' lock
// (`cairn:events`, taken by its first event) after all of them, so two transactions never wait
// for each other in a circle. Row locks (`FOR UPDATE`) are taken after the locks below and before
// the first event.

export const locks = {
  /** The bootstrap identities (UI, archivist, AGENT_KEYS) of servers starting on one database at once. */
  bootstrap: () => "bootstrap",
  /** The archivist's key-value state: the cap on its number of keys holds however many write at once. */
  archivistState: () => "archivist-state",
  /** Applying peers' copies (CONTRACT §16): two links bringing one entry never both insert it. */
  meshApply: () => "mesh-apply",
  /** A project's (or the global scope's) memory writes: no two entries alike in one scope. */
  memoryWrite: (project: string | null) => `memory-write:${project ?? ""}`,
  /** One agent's captures: the same capture twice in a session is stored once. */
  captures: (agentId: string) => `capture:${agentId}`,
  /** The versions of one blueprint: each save takes the next number. */
  blueprint: (project: string | null, name: string) => `blueprint:${project ?? ""}:${name}`,
  /** A project's compile: anchors and compiled entries change one compile at a time. */
  compile: (project: string | null) => `compile:${project ?? ""}`,
  /** The dependency graph of every task: a cycle check sees every edge that commits before it. */
  taskDependencies: () => "task-dependencies",
  /** One blueprint run's progress: fan-outs, retries, its end. */
  blueprintRun: (runId: string) => `blueprint-run:${runId}`,
} as const;
