import { afterAll, beforeAll } from "vitest";
import type { StartOptions } from "../../src/app.js";
import { startTestServer, type Credentials, type TestServer } from "./server.js";

/** A value a `beforeAll` hook sets, failing clearly when read before the hook has run. */
function ready<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not ready: use it inside a hook or a test`);
  return value;
}

/**
 * A server for the enclosing `describe`: started before its tests (`startTestServer(env, options)`)
 * and closed after them. The returned object stands for the running server: every member read goes to it.
 */
export function serverForSuite(env: Record<string, string> = {}, options: StartOptions = {}): TestServer {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(env, options);
  });
  afterAll(() => started?.close());
  return new Proxy({} as TestServer, {
    get(_target, key) {
      const running = ready(started, "the suite's server");
      const value: unknown = Reflect.get(running, key);
      return typeof value === "function" ? (value.bind(running) as unknown) : value;
    },
  });
}

/** An agent self-registered before the suite's tests; call it after `serverForSuite`, whose hook starts the server first. */
export function agentForSuite(server: TestServer, agentId: string): Credentials {
  let registered: Credentials | undefined;
  beforeAll(async () => {
    registered = await server.agent(agentId);
  });
  return {
    get agentId() {
      return ready(registered, `agent ${agentId}`).agentId;
    },
    get apiKey() {
      return ready(registered, `agent ${agentId}`).apiKey;
    },
  };
}
