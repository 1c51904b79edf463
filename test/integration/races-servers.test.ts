import { afterAll, beforeAll, describe, it } from "vitest";
import { FAILURES_PER_MINUTE } from "../../src/services/throttle.js";
import { onPostgres } from "../helpers/database.js";
import { startGroup, type Group } from "../helpers/group.js";
import * as races from "../helpers/race-scenarios.js";

// The promises of test/integration/races.test.ts across three `cairn serve` processes on one
// PostgreSQL database, each scenario spreading its requests over the three. (On SQLite a
// database has one server: races.test.ts is the whole story there.)

describe.runIf(onPostgres)("promises raced across three servers", () => {
  let group: Group;

  beforeAll(async () => {
    group = await startGroup(3, () => ({ TASK_LEASE_SECONDS: "2" }));
  }, 120_000);

  afterAll(async () => {
    await group?.stop();
  });

  it("concurrent consumes hand each message to exactly one caller", async () => {
    await races.consumeExactlyOnce(group);
  });

  it("read-all racing consumes marks each message once", async () => {
    await races.readAllRacesConsume(group);
  });

  it("marking a message read from every server at once reads it once", async () => {
    await races.markReadOnce(group);
  });

  it("two dependencies that would close a cycle, added at once: one is refused", async () => {
    await races.dependencyCycleOnce(group);
  });

  it("one Idempotency-Key sent to all three at once acts once", async () => {
    await races.sameKeyActsOnce(group);
  });

  it("a claim racing a new dependency never claims a blocked task", async () => {
    await races.claimRacesNewDependency(group);
  });

  it("the last dependencies completing at once announce their dependent once", async () => {
    await races.fanInUnblockedOnce(group);
  });

  it("removing a dependency while another completes announces the dependent once", async () => {
    await races.removeDependencyRacesCompletion(group);
  });

  it("an entry written again while its author edits it keeps the edit", async () => {
    await races.reinforcementKeepsEdits(group);
  });

  it("one fact written by six agents over three servers is stored once, the others reinforcing it", async () => {
    await races.duplicatesStoredOnce(group);
  });

  it("searches and reads of the same entries on every server count each read once", async () => {
    await races.searchReadsCountedOnce(group);
  });

  it("a project cleared while an entry moves out keeps the moved entry", async () => {
    await races.clearRacesMove(group);
  });

  it("an agent deleted while it renames itself: one wins", async () => {
    await races.deleteRacesRename(group);
  });

  it("a burst of wrong keys over three servers: each checks no more than the throttle allows", async () => {
    await races.guessingBurstThrottled(group, FAILURES_PER_MINUTE);
  });

  it("writes into several projects while the agent keeps loading its handoff: every one reaches it", async () => {
    await races.handoffMissesNothing(group);
  });

  it("writers on every server while followers page the feed by change_seq from each: each meets every entry in its final state", async () => {
    await races.feedFollowersMissNothing(group);
  });

  it("two decisions superseding one at once: one is refused", async () => {
    await races.supersedeOnce(group);
  });

  it("a compile rewriting an entry while it is deleted never brings it back", async () => {
    await races.compileRacesDelete(group);
  });

  it("two handoff loads at once leave the memory cursor at the later", async () => {
    await races.handoffCursorNeverBack(group);
  });

  it("claims lapsing while their assignee completes, rivals claim and the owner releases: every log is legal", { timeout: 60_000 }, async () => {
    await races.leaseExpiryRacesClaims(group, 2);
  });
});
