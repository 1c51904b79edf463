import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OutboundFailure, OutboundRefusal, upstreamError } from "../../src/net/errors.js";
import { DEFAULT_TIMEOUT_MS, MAX_REDIRECTS, OutboundFetcher, type OutboundCall, type ResolvedAddress, type Resolver } from "../../src/net/fetch.js";
import { defaultOutboundSettings, type OutboundSettings } from "../../src/net/policy.js";
import { startCanary, type Canary } from "../helpers/canary.js";

// Real sockets, on loopback only. A canary counts the connections a refused call would have made;
// names are answered by an injected resolver (or, for `localhost`, the system's), never by DNS.

const MiB = 1024 * 1024;

const fetcher = (settings: Partial<OutboundSettings> = {}, resolve?: Resolver): OutboundFetcher =>
  new OutboundFetcher({ settings: { ...defaultOutboundSettings, ...settings }, ...(resolve ? { resolve } : {}) });

/** A resolver from a table of names; any other name does not exist. */
function resolverOf(table: Record<string, string[]>, asked: string[] = []): Resolver {
  return (hostname) => {
    asked.push(hostname);
    const answers = table[hostname.toLowerCase()];
    if (!answers) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
    return Promise.resolve(answers.map((address): ResolvedAddress => ({ address, family: address.includes(":") ? 6 : 4 })));
  };
}

async function caught(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error("the call succeeded");
}

async function refusalOf(call: Promise<unknown>): Promise<OutboundRefusal> {
  const error = await caught(call);
  if (!(error instanceof OutboundRefusal)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

async function failureOf(call: Promise<unknown>): Promise<OutboundFailure> {
  const error = await caught(call);
  if (!(error instanceof OutboundFailure)) throw new Error(`expected a failure, got ${String(error)}`);
  return error;
}

const call = (overrides: Partial<OutboundCall> = {}): OutboundCall => ({ policy: "feeds", maxBodyBytes: MiB, ...overrides });

describe("a refused call never connects: a canary on loopback sees no connection", () => {
  let canary: Canary;
  beforeAll(async () => {
    canary = await startCanary();
  });
  afterAll(() => canary.close());
  afterEach(() => {
    expect(canary.connections()).toBe(0);
  });

  const literals = [
    "127.0.0.1",
    "2130706433",
    "0x7f.1",
    "0177.0.0.1",
    "127.1",
    "0x7f000001",
    "017700000001",
    "127.0.0.1.",
    "127.0.0.1..",
    "%31%32%37.0.0.1",
    "\uff11\uff12\uff17.0.0.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:127.0.0.1]",
    "[::ffff:0:127.0.0.1]",
    "[::127.0.0.1]",
    "[64:ff9b::127.0.0.1]",
    "[2002:7f00:1::1]",
    "0.0.0.0",
    "0",
    "[::]",
    "[::ffff:0.0.0.0]",
  ];

  it.each(literals)("refuses http://%s:<canary>/ at the address step under feeds, and under mesh with MESH_ALLOW_PRIVATE=false", async (host) => {
    for (const [policy, settings] of [
      ["feeds", {}],
      ["mesh", { meshAllowPrivate: false }],
    ] as const) {
      const error = await refusalOf(fetcher(settings).request(`http://${host}:${canary.port}/feed?token=SECRET`, call({ policy })));
      expect(error).toMatchObject({ step: "address", rule: "address" });
      expect(error.message).not.toContain("SECRET");
    }
  });

  it.each(["localhost", "LOCALHOST"])("refuses http://%s:<canary>/ at the dns step (the system resolver answers loopback)", async (host) => {
    const error = await refusalOf(fetcher().request(`http://${host}:${canary.port}/`, call()));
    expect(error).toMatchObject({ step: "dns", rule: "dns", kind: "loopback" });
  });

  it("refuses a name an injected resolver points at loopback, at the dns step", async () => {
    for (const answer of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "0.0.0.0"]) {
      const error = await refusalOf(fetcher({}, resolverOf({ "evil.test": [answer] })).request(`http://evil.test:${canary.port}/`, call()));
      expect(error).toMatchObject({ step: "dns", rule: "dns" });
      expect(error.reason).toContain("evil.test resolves to");
    }
  });

  it("refuses a name when any one of its answers is refused, whatever the order", async () => {
    for (const answers of [
      ["93.184.215.14", "127.0.0.1"],
      ["127.0.0.1", "93.184.215.14"],
      ["2606:2800:21f:cb07:6820:80da:af6b:8b2c", "::1"],
    ]) {
      const error = await refusalOf(fetcher({}, resolverOf({ "mixed.test": answers })).request(`http://mixed.test:${canary.port}/`, call()));
      expect(error).toMatchObject({ step: "dns", kind: "loopback" });
    }
  });

  it("refuses a resolver's answer that is not an address", async () => {
    const error = await refusalOf(fetcher({}, resolverOf({ "odd.test": ["2130706433"] })).request(`http://odd.test:${canary.port}/`, call()));
    // Read as the fetcher reads any host: the spelling is loopback.
    expect(error).toMatchObject({ step: "dns", kind: "loopback" });
    const garbage = await refusalOf(fetcher({}, resolverOf({ "odd.test": ["not-an-address"] })).request(`http://odd.test:${canary.port}/`, call()));
    expect(garbage).toMatchObject({ step: "dns" });
  });

  it("refuses https: the same way", async () => {
    expect(await refusalOf(fetcher().request(`https://127.0.0.1:${canary.port}/`, call()))).toMatchObject({ step: "address" });
    expect(await refusalOf(fetcher().request(`https://localhost:${canary.port}/`, call()))).toMatchObject({ step: "dns" });
  });

  it("refuses a URL object as it refuses the string", async () => {
    expect(await refusalOf(fetcher().request(new URL(`http://0x7f.1:${canary.port}/`), call()))).toMatchObject({ step: "address" });
  });
});

describe("a permitted call reaches the server", () => {
  let canary: Canary;
  beforeAll(async () => {
    canary = await startCanary();
  });
  afterAll(() => canary.close());

  it.each([
    ["feeds with FEEDS_ALLOW_PRIVATE=true", "feeds", { feedsAllowPrivate: true }],
    ["feeds with 127.0.0.1 in OUTBOUND_ALLOWLIST", "feeds", { allowlist: ["127.0.0.1"] }],
    ["feeds with 127.0.0.0/8 in OUTBOUND_ALLOWLIST", "feeds", { allowlist: ["127.0.0.0/8"] }],
    ["mesh (MESH_ALLOW_PRIVATE defaults to true)", "mesh", {}],
    ["operator", "operator", {}],
  ] as const)("under %s", async (_name, policy, settings) => {
    const before = canary.connections();
    const response = await fetcher(settings).request(`http://127.0.0.1:${canary.port}/feed?page=2`, call({ policy }));
    expect(response).toMatchObject({ status: 200, url: `http://127.0.0.1:${canary.port}/feed?page=2`, redirects: 0 });
    expect(response.body.toString()).toBe("canary");
    expect(canary.connections()).toBe(before + 1);
    expect(canary.requests.at(-1)).toMatchObject({ line: "GET /feed?page=2", host: `127.0.0.1:${canary.port}` });
  });

  it("under an allowlisted name, sending the name as Host", async () => {
    const response = await fetcher({ allowlist: ["feeds.lan"] }, resolverOf({ "feeds.lan": ["127.0.0.1"] })).request(`http://feeds.lan:${canary.port}/rss`, call());
    expect(response.status).toBe(200);
    expect(canary.requests.at(-1)).toMatchObject({ line: "GET /rss", host: `feeds.lan:${canary.port}` });
  });
});

describe("redirects: at most 3, each target checked again", () => {
  let canary: Canary;
  let origin: Canary;
  const targets: string[] = [];
  // origin.test and other.test are the origin server; the allowlist names them, not its address,
  // so a redirect to the same address spelled as an address is refused.
  const names = { "origin.test": ["127.0.0.1"], "other.test": ["127.0.0.1"], "localhost.": ["127.0.0.1"], "evil.test": ["127.0.0.1"] };
  const asked: string[] = [];
  const viaOrigin = () => fetcher({ allowlist: ["origin.test", "other.test"] }, resolverOf(names, asked));

  beforeAll(async () => {
    canary = await startCanary();
    origin = await startCanary((request, response) => {
      const path = request.url ?? "/";
      const hop = /^\/hop\/(\d+)$/.exec(path);
      const to = /^\/to\/(\d+)(\?.*)?$/.exec(path);
      if (to) response.writeHead(302, { location: targets[Number(to[1])] }).end("moved");
      else if (hop && Number(hop[1]) > 0) response.writeHead(301, { location: `/hop/${Number(hop[1]) - 1}` }).end();
      else if (hop) response.writeHead(200).end("arrived");
      else if (path === "/see-other") response.writeHead(303, { location: "/echo" }).end();
      else if (path === "/temporary") response.writeHead(307, { location: "/echo" }).end();
      else if (path === "/cross") response.writeHead(302, { location: `http://other.test:${origin.port}/echo` }).end();
      else if (path === "/same") response.writeHead(302, { location: "/echo" }).end();
      else if (path === "/echo") {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString()));
        request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ method: request.method, body, headers: request.headers })));
      } else response.writeHead(404).end();
    });
    const c = canary.port;
    targets.push(
      `http://127.0.0.1:${c}/`,
      `http://2130706433:${c}/`,
      `http://0x7f.1:${c}/`,
      `http://[::1]:${c}/`,
      `http://[::ffff:127.0.0.1]:${c}/`,
      `http://0.0.0.0:${c}/`,
      `//127.0.0.1:${c}/relative`,
      `http://localhost.:${c}/`,
      `http://evil.test:${c}/`,
      "file:///etc/passwd",
      `gopher://127.0.0.1:${c}/_`,
      `http://user:pw@origin.test:${c}/`,
      "http://256.1.1.1/",
    );
  });
  afterAll(async () => {
    await canary.close();
    await origin.close();
  });

  const expected: [number, string][] = [
    [0, "address"],
    [1, "address"],
    [2, "address"],
    [3, "address"],
    [4, "address"],
    [5, "address"],
    [6, "address"],
    [7, "dns"],
    [8, "dns"],
    [9, "scheme"],
    [10, "scheme"],
    [11, "userinfo"],
    [12, "url"],
  ];

  it.each(expected)("refuses redirect target %i at the redirect step (rule %s), the canary seeing nothing", async (index, rule) => {
    const before = origin.requests.length;
    const error = await refusalOf(viaOrigin().request(`http://origin.test:${origin.port}/to/${index}?token=SECRET`, call()));
    expect(error).toMatchObject({ step: "redirect", rule, url: `http://origin.test:${origin.port}/to/${index}` });
    expect(error.message).not.toMatch(/SECRET|user:pw/);
    expect(origin.requests.length).toBe(before + 1);
    expect(canary.connections()).toBe(0);
  });

  it("follows 3 redirects and refuses a 4th before sending it", async () => {
    const arrived = await viaOrigin().request(`http://origin.test:${origin.port}/hop/3`, call());
    expect(arrived).toMatchObject({ status: 200, redirects: MAX_REDIRECTS, url: `http://origin.test:${origin.port}/hop/0` });
    const before = origin.requests.length;
    const error = await refusalOf(viaOrigin().request(`http://origin.test:${origin.port}/hop/4`, call()));
    expect(error).toMatchObject({ step: "redirect", rule: "limit" });
    expect(origin.requests.slice(before).map((request) => request.line)).toEqual(["GET /hop/4", "GET /hop/3", "GET /hop/2", "GET /hop/1"]);
  });

  it("lets a call ask for fewer redirects, never more", async () => {
    expect(await refusalOf(viaOrigin().request(`http://origin.test:${origin.port}/hop/1`, call({ maxRedirects: 0 })))).toMatchObject({ rule: "limit" });
    expect(await refusalOf(viaOrigin().request(`http://origin.test:${origin.port}/hop/4`, call({ maxRedirects: 10 })))).toMatchObject({ rule: "limit" });
  });

  it("turns a POST into a GET without its body on 303, and keeps both on 307", async () => {
    const seeOther = await viaOrigin().request(`http://origin.test:${origin.port}/see-other`, call({ method: "POST", body: "payload", headers: { "content-type": "text/plain" } }));
    expect(JSON.parse(seeOther.body.toString())).toMatchObject({ method: "GET", body: "" });
    const temporary = await viaOrigin().request(`http://origin.test:${origin.port}/temporary`, call({ method: "POST", body: "payload" }));
    expect(JSON.parse(temporary.body.toString())).toMatchObject({ method: "POST", body: "payload" });
  });

  it("drops credentials on a redirect to another origin, and keeps them on the same origin", async () => {
    const headers = { authorization: "Bearer peer-token", cookie: "session=1" };
    const cross = JSON.parse((await viaOrigin().request(`http://origin.test:${origin.port}/cross`, call({ headers }))).body.toString()) as { headers: Record<string, string> };
    expect(cross.headers.host).toBe(`other.test:${origin.port}`);
    expect(cross.headers.authorization).toBeUndefined();
    expect(cross.headers.cookie).toBeUndefined();
    const same = JSON.parse((await viaOrigin().request(`http://origin.test:${origin.port}/same`, call({ headers }))).body.toString()) as { headers: Record<string, string> };
    expect(same.headers.authorization).toBe("Bearer peer-token");
  });
});

describe("the connection is pinned to the checked address (DNS rebinding)", () => {
  let good: Canary;
  let rebound: Canary;
  beforeAll(async () => {
    good = await startCanary((_request, response) => response.writeHead(200).end("good"));
    rebound = await startCanary(undefined, "127.0.0.2", good.port);
  });
  afterAll(async () => {
    await good.close();
    await rebound.close();
  });

  /** First answer 127.0.0.1, every later one 127.0.0.2. */
  function rebinding(asked: string[]): Resolver {
    return (hostname) => {
      asked.push(hostname);
      return Promise.resolve([{ address: asked.length === 1 ? "127.0.0.1" : "127.0.0.2", family: 4 }]);
    };
  }

  it("asks the resolver once and connects to that answer, even when a second answer would be allowed too", async () => {
    const asked: string[] = [];
    // Under mesh 127.0.0.2 is allowed as well: only pinning keeps the connection on the first answer.
    const response = await fetcher({}, rebinding(asked)).request(`http://rebind.test:${good.port}/`, call({ policy: "mesh" }));
    expect(response.body.toString()).toBe("good");
    expect(asked).toEqual(["rebind.test"]);
    expect(good.requests.at(-1)?.host).toBe(`rebind.test:${good.port}`);
    expect(rebound.connections()).toBe(0);
  });

  it("checks each call's own answer: the rebound answer is refused at the dns step", async () => {
    const asked: string[] = [];
    const rebinder = fetcher({ allowlist: ["127.0.0.1"] }, rebinding(asked));
    expect((await rebinder.request(`http://rebind.test:${good.port}/`, call())).body.toString()).toBe("good");
    const error = await refusalOf(rebinder.request(`http://rebind.test:${good.port}/`, call()));
    expect(error).toMatchObject({ step: "dns", address: "127.0.0.2", kind: "loopback" });
    expect(asked).toEqual(["rebind.test", "rebind.test"]);
    expect(rebound.connections()).toBe(0);
  });

  it("keeps the name for TLS: the ClientHello to the pinned address names the host (SNI)", async () => {
    const hellos: Buffer[] = [];
    const tls: TcpServer = createTcpServer((socket) => {
      socket.once("data", (chunk: Buffer) => {
        hellos.push(chunk);
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    try {
      const port = (tls.address() as AddressInfo).port;
      const failure = await failureOf(fetcher({ allowlist: ["pinned.test"] }, resolverOf({ "pinned.test": ["127.0.0.1"] })).request(`https://pinned.test:${port}/`, call()));
      expect(failure.kind).toBe("connection");
      expect(hellos).toHaveLength(1);
      expect(hellos[0]?.toString("latin1")).toContain("pinned.test");
    } finally {
      await new Promise((resolve) => tls.close(resolve));
    }
  });
});

describe("one clock for the whole call", () => {
  let silent: TcpServer;
  let silentPort: number;
  const silentSockets: Socket[] = [];
  let trickle: Canary;
  beforeAll(async () => {
    // Accepts, and never answers.
    silent = createTcpServer((socket) => silentSockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    silentPort = (silent.address() as AddressInfo).port;
    trickle = await startCanary((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => response.write("BODY-SECRET "), 50);
      response.on("close", () => clearInterval(timer));
    });
  });
  afterAll(async () => {
    for (const socket of silentSockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    await trickle.close();
  });

  it("defaults to 10 seconds", () => {
    expect(DEFAULT_TIMEOUT_MS).toBe(10_000);
  });

  it("times out a server that never answers", async () => {
    const started = Date.now();
    const failure = await failureOf(fetcher({ allowlist: ["127.0.0.1"] }).request(`http://127.0.0.1:${silentPort}/?token=QUERY-SECRET`, call({ timeoutMs: 300 })));
    const elapsed = Date.now() - started;
    expect(failure).toMatchObject({ kind: "timeout", url: `http://127.0.0.1:${silentPort}/` });
    expect(failure.message).not.toContain("QUERY-SECRET");
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(3000);
  });

  it("times out a body that keeps coming slowly: the limit is on the whole call, not on silence", async () => {
    const started = Date.now();
    const failure = await failureOf(fetcher({ allowlist: ["127.0.0.1"] }).request(`http://127.0.0.1:${trickle.port}/`, call({ timeoutMs: 400 })));
    expect(failure.kind).toBe("timeout");
    expect(failure.message).not.toContain("BODY-SECRET");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("times out a streamed body while it is read", async () => {
    const response = await fetcher({ allowlist: ["127.0.0.1"] }).stream(`http://127.0.0.1:${trickle.port}/`, call({ timeoutMs: 400 }));
    const failure = await failureOf((async () => {
      for await (const _chunk of response.body) {
        // reading
      }
    })());
    expect(failure.kind).toBe("timeout");
  });

  it("times out a resolver that never answers", async () => {
    const hanging: Resolver = () => new Promise(() => {});
    const failure = await failureOf(fetcher({}, hanging).request("http://slow-dns.test/", call({ timeoutMs: 200 })));
    expect(failure.kind).toBe("timeout");
  });

  it("stops when the caller's signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const failure = await failureOf(fetcher({ allowlist: ["127.0.0.1"] }).request(`http://127.0.0.1:${silentPort}/`, call({ signal: controller.signal })));
    expect(failure.kind).toBe("aborted");
  });
});

describe("the body cap", () => {
  let server: Canary;
  let closedAfterBytes: number[] = [];
  beforeAll(async () => {
    server = await startCanary((request, response) => {
      const path = new URL(request.url ?? "/", "http://x").pathname;
      const secret = Buffer.alloc(64 * 1024, "BODY-SECRET ");
      if (path === "/six-mib") {
        response.writeHead(200, { "content-type": "application/octet-stream" });
        for (let sent = 0; sent < 6 * MiB; sent += secret.length) response.write(secret);
        response.end();
      } else if (path === "/six-mib-declared") {
        response.writeHead(200, { "content-length": String(6 * MiB) }).end(Buffer.alloc(6 * MiB, "BODY-SECRET "));
      } else if (path === "/five-mib") {
        response.writeHead(200, { "content-length": String(5 * MiB) }).end(Buffer.alloc(5 * MiB, 1));
      } else if (path === "/endless") {
        let written = 0;
        response.writeHead(200);
        const pump = (): void => {
          while (!response.destroyed && response.write(secret)) written += secret.length;
        };
        response.on("drain", pump);
        response.on("close", () => closedAfterBytes.push(written));
        pump();
      } else if (path === "/broken") {
        response.writeHead(200, { "content-length": "100000" });
        response.write("BODY-SECRET partial");
        setTimeout(() => response.destroy(), 20);
      } else if (path === "/error") {
        response.writeHead(500, { "content-type": "text/plain" }).end("BODY-SECRET stack trace");
      }
    });
  });
  afterAll(() => server.close());
  const local = () => fetcher({ allowlist: ["127.0.0.1"] });

  it("refuses a 6 MiB body at 5 MiB", async () => {
    const failure = await failureOf(local().request(`http://127.0.0.1:${server.port}/six-mib`, call({ maxBodyBytes: 5 * MiB })));
    expect(failure).toMatchObject({ kind: "too-large", message: `outbound call to http://127.0.0.1:${server.port}/six-mib failed: the body exceeds ${5 * MiB} bytes` });
  });

  it("refuses a body whose Content-Length passes the cap without reading it", async () => {
    const failure = await failureOf(local().request(`http://127.0.0.1:${server.port}/six-mib-declared`, call({ maxBodyBytes: 5 * MiB })));
    expect(failure.kind).toBe("too-large");
  });

  it("accepts a body of exactly the cap", async () => {
    const response = await local().request(`http://127.0.0.1:${server.port}/five-mib`, call({ maxBodyBytes: 5 * MiB }));
    expect(response.body.length).toBe(5 * MiB);
  });

  it("answers a HEAD whatever Content-Length it announces", async () => {
    const response = await local().request(`http://127.0.0.1:${server.port}/six-mib-declared`, call({ method: "HEAD", maxBodyBytes: 1024 }));
    expect(response).toMatchObject({ status: 200, headers: { "content-length": String(6 * MiB) } });
    expect(response.body.length).toBe(0);
  });

  it("aborts an endless body the moment it passes the cap, closing the connection", async () => {
    closedAfterBytes = [];
    const started = Date.now();
    const failure = await failureOf(local().request(`http://127.0.0.1:${server.port}/endless`, call({ maxBodyBytes: MiB })));
    expect(failure.kind).toBe("too-large");
    expect(Date.now() - started).toBeLessThan(3000);
    await expect.poll(() => closedAfterBytes.length).toBe(1);
    // What the server got out before the close: the cap plus what the sockets buffer, not more.
    expect(closedAfterBytes[0]).toBeLessThan(16 * MiB);
  });

  it("aborts an endless streamed body at its cap", async () => {
    closedAfterBytes = [];
    const response = await local().stream(`http://127.0.0.1:${server.port}/endless`, call({ maxBodyBytes: 2 * MiB }));
    let read = 0;
    const failure = await failureOf((async () => {
      for await (const chunk of response.body as AsyncIterable<Buffer>) read += chunk.length;
    })());
    expect(failure.kind).toBe("too-large");
    expect(read).toBeLessThanOrEqual(2 * MiB);
    await expect.poll(() => closedAfterBytes.length).toBe(1);
  });

  it("fails a body cut short, without quoting what came", async () => {
    const failure = await failureOf(local().request(`http://127.0.0.1:${server.port}/broken`, call()));
    expect(failure.kind).toBe("connection");
    expect(failure.message).toContain("closed before the body ended");
    expect(failure.message).not.toContain("BODY-SECRET");
  });

  it("hands an error status to the caller with its body, and never puts a body in a failure", async () => {
    const response = await local().request(`http://127.0.0.1:${server.port}/error`, call());
    expect(response.status).toBe(500);
    expect(response.body.toString()).toContain("BODY-SECRET");
    for (const [path, kind] of [
      ["/six-mib", "too-large"],
      ["/endless", "too-large"],
      ["/broken", "connection"],
    ] as const) {
      const failure = await failureOf(local().request(`http://127.0.0.1:${server.port}${path}?q=QUERY-SECRET`, call({ maxBodyBytes: 512 * 1024 })));
      expect(failure.kind).toBe(kind);
      const detail = JSON.stringify(upstreamError(failure).toBody());
      expect(detail).not.toMatch(/BODY-SECRET|QUERY-SECRET/);
      expect(failure.message).not.toMatch(/BODY-SECRET|QUERY-SECRET/);
    }
  });

  it("fails a refused connection as a connection failure", async () => {
    const closed = await startCanary();
    const port = closed.port;
    await closed.close();
    const failure = await failureOf(local().request(`http://127.0.0.1:${port}/`, call()));
    expect(failure).toMatchObject({ kind: "connection" });
    expect(failure.message).toContain("ECONNREFUSED");
  });
});
