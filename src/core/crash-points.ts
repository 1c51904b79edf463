/**
 * Named points where a test may have the server die at once, as `kill -9` would, to prove that
 * what a crash there leaves behind is whole: `CAIRN_CRASH_AT=<name>` ends the process with SIGKILL
 * the first time it reaches that point (test/integration/idempotency-crash.test.ts). Unset, a
 * point costs one comparison. The names are listed here so tests and code agree on them.
 */
export const CRASH_POINTS = [
  /** A keyed request is about to run: nothing of it is written yet. */
  "idempotency:before-run",
  /** In the transaction of a keyed request's change, its answer written, before the commit. */
  "idempotency:before-commit",
  /** A keyed request's change has committed, its handler has returned; its answer may be stored once more after. */
  "idempotency:after-change",
  /** A keyed request's answer is stored; the client has not been sent it. */
  "idempotency:before-reply",
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

const armed = process.env.CAIRN_CRASH_AT;

export function crashPoint(name: CrashPoint): void {
  if (armed === name) process.kill(process.pid, "SIGKILL");
}
