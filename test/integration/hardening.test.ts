import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { it, test } from "../helpers/fixtures.js";
import { createLogger } from "../../src/core/log.js";
import { catalogue } from "../../tools/catalogue.js";
import { UI_LOGIN_FAILURES_PER_MINUTE } from "../../src/services/throttle.js";
import { onPostgres, withDatabase } from "../helpers/database.js";
import { rawRequest, type RawOptions, type RawResponse } from "../helpers/raw.js";
import { startTestServer, type Credentials, type TestServer } from "../helpers/server.js";

/** CONTRACT §2.2a, the review's findings, one block each. Every request is raw HTTP so Host, Origin and the source address are ours to set. */

const PASSWORD = "a password nobody guesses";
const portOf = (server: TestServer): number => server.server.port;
const send = (server: TestServer, path: string, options: RawOptions = {}): Promise<RawResponse<Record<string, unknown>>> =>
  rawRequest(`http://127.0.0.1:${portOf(server)}${path}`, options);
const keys = (as: Credentials): Record<string, string> => ({ "x-agent-id": as.agentId, "x-api-key": as.apiKey });
/** A JSON POST. */
const json = (body: unknown): Pick<RawOptions, "body" | "method"> & { headers: Record<string, string> } => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

/** The status line's code for a request written byte for byte. */
function statusOfRaw(port: number, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(request));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.on("end", () => resolve(Number(/^HTTP\/1\.\d (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on("error", reject);
  });
}

function expectRefusedHost(response: RawResponse<Record<string, unknown>>): void {
  expect(response.status, response.text).toBe(403);
  expect(response.body).toEqual({ detail: "host not allowed", code: "FORBIDDEN" });
}

describe("the Host check (DNS rebinding)", () => {
  const it = test.extend("alice", ({ server }) => server.agent("host-alice"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD, ALLOWED_HOSTS: "cairn.internal, Build-Box" });

  it("refuses a foreign Host on routes of every access kind, before anything happens", async ({ server, alice }) => {
    const foreign = { host: `attacker.example:${portOf(server)}` };
    const cases: [string, RawOptions][] = [
      ["/memory", { headers: { ...foreign, ...keys(alice) } }],
      ["/agents/self-register", { method: "POST", ...json({ agent_id: "rebound" }), headers: { ...foreign, "content-type": "application/json" } }],
      ["/health", { headers: foreign }],
      ["/openapi.json", { headers: foreign }],
      ["/docs", { headers: foreign }],
      ["/onboard", { headers: foreign }],
      ["/ui/", { headers: foreign }],
      ["/ui/config", { headers: foreign }],
      ["/ui/login", { method: "POST", body: JSON.stringify({ password: PASSWORD }), headers: { ...foreign, "content-type": "application/json" } }],
      ["/oauth/token", { method: "POST", body: `grant_type=client_credentials&client_id=${alice.agentId}&client_secret=${alice.apiKey}`, headers: { ...foreign, "content-type": "application/x-www-form-urlencoded" } }],
      ["/.well-known/oauth-authorization-server", { headers: foreign }],
      ["/mcp", { method: "POST", body: "{}", headers: { ...foreign, ...keys(alice), "content-type": "application/json" } }],
      ["/no/such/route", { headers: foreign }],
    ];
    for (const [path, options] of cases) {
      const response = await send(server, path, options);
      expectRefusedHost(response);
      expect(response.headers["x-request-id"]).toBeTruthy();
    }
    // The rebound self-registration created nothing.
    const agents = await send(server, "/agents?limit=500", { headers: keys(server.owner) });
    expect((agents.body as unknown as { agent_id: string }[]).map((agent) => agent.agent_id)).not.toContain("rebound");
  });

  it("refuses Host values that only look local, and a request without one", async ({ server }) => {
    for (const host of ["localhost.attacker.example", "evil@localhost", "localhost/evil", "127.0.0.1.nip.io", "0.0.0.0", "[::]", "localhost:80:80"]) {
      const response = await send(server, "/health", { headers: { host } });
      expect(response.status, host).toBe(403);
    }
    // HTTP/1.0 lets a client leave Host out; an empty one is no better.
    expect(await statusOfRaw(portOf(server), "GET /health HTTP/1.0\r\n\r\n")).toBe(403);
    expect(await statusOfRaw(portOf(server), "GET /health HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n")).toBe(403);
  });

  it("accepts loopback names and addresses on any port, and the names in ALLOWED_HOSTS", async ({ server, alice }) => {
    for (const host of ["localhost", `localhost:${portOf(server)}`, "LOCALHOST:1", "localhost.", "127.0.0.1", "127.0.0.2:99", "[::1]", `[::1]:${portOf(server)}`, "[0:0:0:0:0:0:0:1]:5", "cairn.internal", "cairn.internal:443", "build-box"]) {
      const response = await send(server, "/agents/me", { headers: { host, ...keys(alice) } });
      expect(response.status, host).toBe(200);
    }
    expectRefusedHost(await send(server, "/health", { headers: { host: "other.internal" } }));
  });

  it("accepts the host of PUBLIC_URL", async () => {
    const behindProxy = await startTestServer({ PUBLIC_URL: "https://cairn.example.com" });
    try {
      expect((await send(behindProxy, "/health", { headers: { host: "cairn.example.com" } })).status).toBe(200);
      expect((await send(behindProxy, "/health", { headers: { host: "Cairn.Example.com:443" } })).status).toBe(200);
      expectRefusedHost(await send(behindProxy, "/health", { headers: { host: "example.com" } }));
    } finally {
      await behindProxy.close();
    }
  });
});

describe("writes authenticated by the UI cookie (CSRF)", () => {
  const it = test
    .extend("alice", ({ server }) => server.agent("csrf-alice"))
    // The owner's UI session, signed in with the password.
    .extend("cookie", async ({ server }) => {
      const login = await send(server, "/ui/login", json({ password: PASSWORD }));
      expect(login.status).toBe(200);
      const cookie = String(login.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
      expect(cookie).toMatch(/^cairn_ui_session=/);
      return cookie;
    });
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  /** The server's own origin, as its pages send it. */
  const ownOrigin = (server: TestServer): string => `http://127.0.0.1:${portOf(server)}`;
  const project = (server: TestServer, cookie: string, name: string, headers: Record<string, string>) =>
    send(server, "/projects", { method: "POST", body: JSON.stringify({ name }), headers: { "content-type": "application/json", cookie, ...headers } });
  const projectIds = async (server: TestServer): Promise<string[]> =>
    ((await send(server, "/projects?limit=500", { headers: keys(server.owner) })).body as unknown as { id: string }[]).map((row) => row.id);

  it("refuses a change from another site, another localhost port, or with no origin at all", async ({ server, cookie }) => {
    const refusals: [string, Record<string, string>][] = [
      ["from-another-site", { origin: "https://attacker.example" }],
      ["from-another-port", { origin: `http://127.0.0.1:${portOf(server) === 1 ? 2 : 1}` }],
      ["from-localhost-elsewhere", { origin: "http://localhost:3000" }],
      ["from-an-opaque-origin", { origin: "null" }],
      ["with-no-origin", {}],
      ["with-a-foreign-referer", { referer: "http://localhost:3000/page" }],
      ["with-a-foreign-origin-and-own-referer", { origin: "http://localhost:3000", referer: `${ownOrigin(server)}/ui/` }],
    ];
    for (const [name, headers] of refusals) {
      const response = await project(server, cookie, name, headers);
      expect(response.status, name).toBe(403);
      expect(response.body).toEqual({ detail: "cross-site request refused", code: "FORBIDDEN" });
    }
    expect(await projectIds(server)).not.toEqual(expect.arrayContaining(refusals.map(([name]) => name)));
  });

  it("refuses the review's attacks: rotating a key, consuming the inbox, claiming, joining, logging out", async ({ server, alice, cookie }) => {
    const foreign = { origin: "http://localhost:3000", "content-type": "application/json", cookie };
    expect((await send(server, `/agents/${alice.agentId}/rotate-key`, { method: "POST", headers: foreign })).status).toBe(403);
    expect((await send(server, "/agents/me", { headers: keys(alice) })).status).toBe(200);
    const message = await send(server, "/messages", { method: "POST", ...json({ to: server.owner.agentId, body: "for the owner" }), headers: { ...keys(alice), "content-type": "application/json" } });
    expect(message.status).toBe(201);
    expect((await send(server, "/messages/inbox/consume", { method: "POST", headers: foreign })).status).toBe(403);
    const task = await send(server, "/tasks", { method: "POST", body: JSON.stringify({ title: "not yours to take" }), headers: { ...keys(alice), "content-type": "application/json" } });
    expect((await send(server, `/tasks/${String(task.body.id)}/claim`, { method: "POST", headers: foreign })).status).toBe(403);
    expect((await send(server, "/projects/csrf-target/join", { method: "POST", headers: foreign })).status).toBe(403);
    expect((await send(server, "/ui/logout", { method: "POST", headers: foreign })).status).toBe(403);
    // Nothing happened: the message is unread, the task open, the session alive.
    const inbox = await send(server, "/messages/inbox", { headers: keys(server.owner) });
    expect((inbox.body as unknown as { id: string }[]).map((row) => row.id)).toContain(message.body.id);
    expect((await send(server, `/tasks/${String(task.body.id)}`, { headers: keys(alice) })).body.status).toBe("open");
    expect((await send(server, "/agents/me", { headers: { cookie } })).status).toBe(200);
  });

  it("accepts a change from the server's own pages, by Origin or (without one) by Referer", async ({ server, cookie }) => {
    expect((await project(server, cookie, "from-own-origin", { origin: ownOrigin(server) })).status).toBe(201);
    expect((await project(server, cookie, "from-localhost-page", { host: `localhost:${portOf(server)}`, origin: `http://localhost:${portOf(server)}` })).status).toBe(201);
    expect((await project(server, cookie, "from-own-referer", { referer: `${ownOrigin(server)}/ui/#/projects` })).status).toBe(201);
    expect(await projectIds(server)).toEqual(expect.arrayContaining(["from-own-origin", "from-localhost-page", "from-own-referer"]));
  });

  it("leaves reads, and requests with key, bearer or session headers, alone", async ({ server, alice, cookie }) => {
    expect((await send(server, "/agents/me", { headers: { cookie, origin: "https://attacker.example" } })).status).toBe(200);
    const byKey = await send(server, "/memory", { method: "POST", body: JSON.stringify({ content: "written with keys from elsewhere" }), headers: { ...keys(alice), cookie, origin: "https://attacker.example", "content-type": "application/json" } });
    expect(byKey.status).toBe(201);
    const session = cookie.slice(cookie.indexOf("=") + 1);
    const bySession = await send(server, "/memory", { method: "POST", body: JSON.stringify({ content: "written with the session header" }), headers: { "x-ui-session": session, "content-type": "application/json" } });
    expect(bySession.status).toBe(201);
    const token = await send(server, "/oauth/token", { method: "POST", ...json({ grant_type: "client_credentials", client_id: alice.agentId, client_secret: alice.apiKey }) });
    const byBearer = await send(server, "/memory", { method: "POST", body: JSON.stringify({ content: "written with a bearer token" }), headers: { authorization: `Bearer ${String(token.body.access_token)}`, cookie, "content-type": "application/json" } });
    expect(byBearer.status).toBe(201);
  });
});

describe("malformed input", () => {
  const lines: string[] = [];
  let server: TestServer;
  const MARKER = "BODY-TEXT-MARKER";
  beforeAll(async () => {
    server = await startTestServer({ UI_PASSWORD: PASSWORD }, { log: createLogger("debug", {}, (line) => lines.push(line)) });
  });
  afterAll(() => server.close());

  it("answers an undecodable path with 400 on every parameterised route, with or without credentials", async () => {
    const routes = catalogue.filter((operation) => operation.http.path.includes(":"));
    expect(routes.length).toBeGreaterThanOrEqual(29);
    for (const operation of routes) {
      const path = operation.http.path.replace(/:[a-z_]+/g, "%zz");
      for (const headers of [{}, keys(server.owner)]) {
        const response = await send(server, path, { method: operation.http.method, headers });
        expect(response.status, `${operation.http.method} ${path}`).toBe(400);
        expect(response.body).toEqual({ detail: "malformed path", code: "BAD_REQUEST" });
      }
    }
    for (const path of ["/ui/%zz", "/%zz", "/memory/%C0%AE", "/memory/%ED%A0%80", "/tasks/%E0%A4%A", "/ui/%FF.js", "/mcp/%zz"]) {
      const response = await send(server, path);
      expect(response.status, path).toBe(400);
      expect(response.body).toEqual({ detail: "malformed path", code: "BAD_REQUEST" });
    }
  });

  it("ignores a UI cookie that does not decode or is unknown: other credentials work, none is 401", async () => {
    for (const cookie of ["cairn_ui_session=%zz", "cairn_ui_session=%E0%A4%A", "cairn_ui_session=", "cairn_ui_session=cairn_ui_unknown", "a=%zz; cairn_ui_session=%zz"]) {
      expect((await send(server, "/agents/me", { headers: { cookie, ...keys(server.owner) } })).status, cookie).toBe(200);
      const written = await send(server, "/memory", { method: "POST", body: JSON.stringify({ content: `cookie ${cookie}` }), headers: { cookie, ...keys(server.owner), "content-type": "application/json" } });
      expect(written.status, cookie).toBe(201);
      const alone = await send(server, "/agents/me", { headers: { cookie } });
      expect(alone.status, cookie).toBe(401);
      expect(alone.body.code).toBe("UNAUTHENTICATED");
    }
  });

  it("answers every malformed /oauth/token body in OAuth's shape: 400 invalid_request, 413 when too large", async () => {
    const form = "application/x-www-form-urlencoded";
    const bodies: [string, RawOptions, number][] = [
      ["malformed json", { body: `{"grant_type": "client_credentials", "${MARKER}`, headers: { "content-type": "application/json" } }, 400],
      ["json array", { body: `["${MARKER}"]`, headers: { "content-type": "application/json" } }, 400],
      ["json string", { body: `"${MARKER}"`, headers: { "content-type": "application/json" } }, 400],
      ["latin1 form", { body: `grant_type=client_credentials&client_id=${MARKER}`, headers: { "content-type": `${form}; charset=latin1` } }, 400],
      ["latin1 json", { body: `{"grant_type":"${MARKER}"}`, headers: { "content-type": "application/json; charset=latin1" } }, 400],
      ["unknown encoding", { body: `grant_type=${MARKER}`, headers: { "content-type": form, "content-encoding": "x-unknown" } }, 400],
      ["gzip that is not", { body: `grant_type=${MARKER}`, headers: { "content-type": form, "content-encoding": "gzip" } }, 400],
      ["over a megabyte", { body: `grant_type=client_credentials&client_id=${MARKER}${"x".repeat(1_100_000)}`, headers: { "content-type": form } }, 413],
      ["a zipped megabyte", { body: gzipSync(`grant_type=client_credentials&x=${"y".repeat(1_100_000)}`), headers: { "content-type": form, "content-encoding": "gzip" } }, 413],
      ["basic with a bad escape", { body: "grant_type=client_credentials", headers: { "content-type": form, authorization: `Basic ${Buffer.from("alice:%zz").toString("base64")}` } }, 400],
      ["basic without a colon", { body: "grant_type=client_credentials", headers: { "content-type": form, authorization: `Basic ${Buffer.from(MARKER).toString("base64")}` } }, 400],
      ["no grant type", { body: `client_id=${MARKER}`, headers: { "content-type": form } }, 400],
      ["repeated client id", { body: `grant_type=client_credentials&client_id=a&client_id=b&client_secret=c`, headers: { "content-type": form } }, 400],
      ["no body", { headers: {} }, 400],
      ["plain text", { body: MARKER, headers: { "content-type": "text/plain" } }, 400],
    ];
    for (const [name, options, status] of bodies) {
      const response = await send(server, "/oauth/token", { method: "POST", ...options });
      expect(response.status, name).toBe(status);
      expect(response.body, name).toMatchObject({ error: "invalid_request" });
      expect(response.headers["cache-control"]).toBe("no-store");
    }
  });

  it("answers malformed bodies on other routes with a 4xx in Cairn's shape", async () => {
    const cases: RawOptions[] = [
      { body: `{"content": "${MARKER}`, headers: { "content-type": "application/json" } },
      { body: `{"content": "${MARKER}"}`, headers: { "content-type": "application/json; charset=latin1" } },
      { body: `{"content": "${MARKER}"}`, headers: { "content-type": "application/json", "content-encoding": "x-unknown" } },
      { body: `{"content": "${MARKER}"}`, headers: { "content-type": "application/json", "content-encoding": "gzip" } },
      { body: `{"password": "${MARKER}`, headers: { "content-type": "application/json" } },
    ];
    for (const [index, options] of cases.entries()) {
      const path = index === 4 ? "/ui/login" : "/memory";
      const response = await send(server, path, { method: "POST", ...options, headers: { ...options.headers, ...keys(server.owner) } });
      expect(response.status, JSON.stringify(options.headers)).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(Object.keys(response.body).sort()).toEqual(["code", "detail"]);
    }
  });

  it("logged none of it as an error, and no body text at all", () => {
    const logged = lines.join("");
    expect(logged).not.toContain(MARKER);
    expect(lines.filter((line) => (JSON.parse(line) as { level: string }).level === "error")).toEqual([]);
    expect(logged).not.toContain("stack");
  });
});

describe("bounded state for unauthenticated callers", () => {
  const CAPACITY = 300;
  it.override("serverEnv", { RATE_LIMIT_PER_MINUTE: "600" });
  it.override("serverOptions", { throttleCapacity: CAPACITY });
  const storedFailures = async (server: TestServer): Promise<number> =>
    (await withDatabase(server.dataDir, (db) => db.get<{ n: number }>("SELECT count(*) AS n FROM auth_failures")))?.n ?? -1;
  const tables = (server: TestServer) => ({ throttle: server.server.gateway.tableSizes().throttle, limiter: server.server.gateway.tableSizes().rateLimiter });

  it("never remembers a client id that no agent can have", async ({ server }) => {
    const before = tables(server);
    const huge = "j".repeat(100_000);
    for (let index = 0; index < 50; index++) {
      const response = await send(server, "/oauth/token", {
        method: "POST",
        ...json({ grant_type: "client_credentials", client_id: `${huge}${index}`, client_secret: "x" }),
      });
      expect(response.status).toBe(401);
      expect(response.body.error).toBe("invalid_client");
      const header = await send(server, "/agents/me", { headers: { "x-agent-id": `Not An Id ${index}`, "x-api-key": "x" } });
      expect(header.status).toBe(401);
    }
    expect(tables(server)).toEqual(before);
    if (onPostgres) expect(await storedFailures(server)).toBe(0);
  });

  // Where several servers share PostgreSQL the failures are counted in the store (below), for a minute.
  it.skipIf(onPostgres)("keeps the throttle table at its capacity however many junk ids arrive, and never a rate bucket for them", async ({ server }) => {
    const before = tables(server);
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          send(server, "/oauth/token", {
            method: "POST",
            body: `grant_type=client_credentials&client_id=junk-${batch}-${index}&client_secret=nope`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          }).then((response) => expect(response.status).toBe(401)),
        ),
      );
      expect(tables(server).throttle).toBeLessThanOrEqual(CAPACITY);
    }
    expect(tables(server).throttle).toBe(CAPACITY);
    expect(tables(server).limiter).toBe(before.limiter);
  });

  it.runIf(onPostgres)("on PostgreSQL counts junk ids' failures in the store, once each, and never a rate bucket for them", async ({ server }) => {
    const before = tables(server);
    await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        send(server, "/oauth/token", {
          method: "POST",
          body: `grant_type=client_credentials&client_id=junk-${index}&client_secret=nope`,
          headers: { "content-type": "application/x-www-form-urlencoded" },
        }).then((response) => expect(response.status).toBe(401)),
      ),
    );
    expect(await storedFailures(server)).toBe(200);
    expect(tables(server)).toEqual(before);
    const buckets = await withDatabase(server.dataDir, (db) => db.get<{ n: number }>("SELECT count(*) AS n FROM rate_buckets WHERE starts_with(agent_id, 'junk-')"));
    expect(buckets?.n).toBe(0);
  });
});

describe("credential guessing", () => {
  // Created directly: self-registration needs the registration key here, and its failures are under test.
  const agent = async (server: TestServer, agentId: string): Promise<Credentials> => {
    const { api_key } = await server.server.gateway.maintenance.createAgent(agentId, null, "agent");
    return { agentId, apiKey: api_key };
  };
  const it = test.extend("alice", ({ server }) => agent(server, "guess-alice")).extend("bob", ({ server }) => agent(server, "guess-bob"));
  it.override("serverEnv", { REGISTRATION_KEY: "the-registration-key-0123", RATE_LIMIT_PER_MINUTE: "0" });
  const ELSEWHERE = "127.0.0.2";

  it("locks a guessed agent id after 20 wrong keys from one address, for that address only", async ({ server, alice, bob }) => {
    for (let attempt = 0; attempt < 20; attempt++) {
      expect((await send(server, "/agents/me", { headers: { ...keys(alice), "x-api-key": `cairn_guess_${attempt}` } })).status).toBe(401);
    }
    const locked = await send(server, "/agents/me", { headers: keys(alice) });
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe("RATE_LIMITED");
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(locked.headers["retry-after"])).toBeLessThanOrEqual(60);
    // The OAuth secret is the same key: it is locked too.
    const token = await send(server, "/oauth/token", { method: "POST", ...json({ grant_type: "client_credentials", client_id: alice.agentId, client_secret: alice.apiKey }) });
    expect(token.status).toBe(429);
    expect(token.body.error).toBe("temporarily_unavailable");
    // Another identity from the same address, and the same identity from elsewhere, are unaffected.
    expect((await send(server, "/agents/me", { headers: keys(bob) })).status).toBe(200);
    expect((await send(server, "/agents/me", { headers: keys(alice), localAddress: ELSEWHERE })).status).toBe(200);
  });

  it("locks OAuth secrets the same way, in OAuth's shape", async ({ server }) => {
    const carol = await agent(server, "guess-carol");
    const attempt = (secret: string, localAddress?: string) =>
      send(server, "/oauth/token", { method: "POST", ...json({ grant_type: "client_credentials", client_id: carol.agentId, client_secret: secret }), ...(localAddress ? { localAddress } : {}) });
    for (let index = 0; index < 20; index++) expect((await attempt(`wrong-${index}`)).body.error).toBe("invalid_client");
    const locked = await attempt(carol.apiKey);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
    expect((await send(server, "/agents/me", { headers: keys(carol) })).status).toBe(429);
    expect((await attempt(carol.apiKey, ELSEWHERE)).status).toBe(200);
  });

  it("refuses OAuth secrets a page of another site sends, so no page can lock a local agent out", async ({ server }) => {
    const dave = await agent(server, "guess-dave");
    const form = (secret: string, origin?: string) =>
      send(server, "/oauth/token", {
        method: "POST",
        body: `grant_type=client_credentials&client_id=${dave.agentId}&client_secret=${secret}`,
        headers: { "content-type": "application/x-www-form-urlencoded", ...(origin ? { origin } : {}) },
      });
    for (let index = 0; index < 25; index++) {
      const refused = await form(`wrong-${index}`, "https://attacker.example");
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: "invalid_request", error_description: "cross-site request refused" });
    }
    expect((await form(dave.apiKey, "https://attacker.example")).status).toBe(403);
    // Nothing was counted: the agent's own client, and a local tool on another loopback port, still get tokens.
    expect((await form(dave.apiKey)).status).toBe(200);
    expect((await form(dave.apiKey, "http://localhost:6274")).status).toBe(200);
  });

  it("locks the registration key after 20 wrong ones from one address", async ({ server }) => {
    const register = (key: string, agentId: string, localAddress?: string) =>
      send(server, "/agents/register", { method: "POST", body: JSON.stringify({ agent_id: agentId }), headers: { "content-type": "application/json", "x-registration-key": key }, ...(localAddress ? { localAddress } : {}) });
    for (let index = 0; index < 20; index++) expect((await register(`wrong-${index}`, "guessed-in")).status).toBe(401);
    const locked = await register("the-registration-key-0123", "locked-out");
    expect(locked.status).toBe(429);
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
    const selfRegister = await send(server, "/agents/self-register", { method: "POST", body: JSON.stringify({ agent_id: "also-locked" }), headers: { "content-type": "application/json", "x-registration-key": "the-registration-key-0123" } });
    expect(selfRegister.status).toBe(429);
    expect((await register("the-registration-key-0123", "from-elsewhere", ELSEWHERE)).status).toBe(201);
  });
});

describe("the UI password", () => {
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("locks after 5 wrong passwords from one address (CONTRACT §2.2's stricter limit); the owner elsewhere still signs in", async ({ server }) => {
    const login = (password: string, localAddress?: string) =>
      send(server, "/ui/login", { method: "POST", ...json({ password }), ...(localAddress ? { localAddress } : {}) });
    for (let index = 0; index < UI_LOGIN_FAILURES_PER_MINUTE; index++) expect((await login(`guess-${index}`)).status).toBe(401);
    const locked = await login(PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
    expect((await login(PASSWORD, "127.0.0.3")).status).toBe(200);
  });
});
