import { describe } from "vitest";
import { test } from "../helpers/fixtures.js";
import { clusterOf } from "../helpers/group.js";
import * as races from "../helpers/race-scenarios.js";
import { FAILURES_PER_MINUTE } from "../../src/services/throttle.js";

// Every promise of docs/architecture.md's concurrency table, raced on one server: on SQLite its
// one writer keeps them by itself, on PostgreSQL the pool's connections overlap transactions just
// as separate servers do (test/integration/races-servers.test.ts runs the same on three).

describe("promises raced on one server", () => {
  test("concurrent consumes hand each message to exactly one caller", async ({ server }) => {
    await races.consumeExactlyOnce(clusterOf(server));
  });

  test("read-all racing consumes marks each message once", async ({ server }) => {
    await races.readAllRacesConsume(clusterOf(server));
  });

  test("marking a message read from many requests at once reads it once", async ({ server }) => {
    await races.markReadOnce(clusterOf(server));
  });

  test("two dependencies that would close a cycle, added at once: one is refused", async ({ server }) => {
    await races.dependencyCycleOnce(clusterOf(server));
  });

  test("one Idempotency-Key sent six times at once acts once", async ({ server }) => {
    await races.sameKeyActsOnce(clusterOf(server));
  });

  test("a claim racing a new dependency never claims a blocked task", async ({ server }) => {
    await races.claimRacesNewDependency(clusterOf(server));
  });

  test("the last dependencies completing at once announce their dependent once", async ({ server }) => {
    await races.fanInUnblockedOnce(clusterOf(server));
  });

  test("removing a dependency while another completes announces the dependent once", async ({ server }) => {
    await races.removeDependencyRacesCompletion(clusterOf(server));
  });

  test("an entry written again while its author edits it keeps the edit", async ({ server }) => {
    await races.reinforcementKeepsEdits(clusterOf(server));
  });

  test("searches and reads of the same entries from many callers count each read once", async ({ server }) => {
    await races.searchReadsCountedOnce(clusterOf(server));
  });

  test("a project cleared while an entry moves out keeps the moved entry", async ({ server }) => {
    await races.clearRacesMove(clusterOf(server));
  });

  test("an agent deleted while it renames itself: one wins, and a delete that answers 204 deleted it", async ({ server }) => {
    await races.deleteRacesRename(clusterOf(server));
  });

  test("a burst of wrong keys at once is checked no more than the throttle allows", async ({ server }) => {
    await races.guessingBurstThrottled(clusterOf(server), FAILURES_PER_MINUTE);
  });

  test("writes into several projects while the agent keeps loading its handoff: every one reaches it", async ({ server }) => {
    await races.handoffMissesNothing(clusterOf(server));
  });

  test("writers writing while followers page the feed by change_seq: each meets every entry in its final state", async ({ server }) => {
    await races.feedFollowersMissNothing(clusterOf(server));
  });

  test("one fact written by six agents at once is stored once, the others reinforcing it", async ({ server }) => {
    await races.duplicatesStoredOnce(clusterOf(server));
  });

  test("two decisions superseding one at once: one is refused", async ({ server }) => {
    await races.supersedeOnce(clusterOf(server));
  });

  test("a compile rewriting an entry while it is deleted never brings it back", async ({ server }) => {
    await races.compileRacesDelete(clusterOf(server));
  });

  test("two handoff loads at once leave the memory cursor at the later", async ({ server }) => {
    await races.handoffCursorNeverBack(clusterOf(server));
  });
});

describe("leases raced on one server", () => {
  const it = test;
  it.override("serverEnv", { TASK_LEASE_SECONDS: "1" });
  it.override("serverOptions", { leaseSweepIntervalMs: 100 });

  it("claims lapsing while their assignee completes, rivals claim and the owner releases: every log is legal", async ({ server }) => {
    await races.leaseExpiryRacesClaims(clusterOf(server), 1);
  });
});

describe("expiry raced on one server", () => {
  const it = test;
  it.override("serverOptions", { sweepIntervalMs: 20 });

  it("entries expiring while their author extends them: an extension that answered 200 keeps its entry", async ({ server }) => {
    await races.expiryRacesExtension(clusterOf(server));
  });
});
