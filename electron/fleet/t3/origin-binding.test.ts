// An environment's client is bound to one origin when it is built: its requests, its token and its
// sockets go there and nowhere else, whatever path, redirect or token a caller or a server offers.
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { T3Error } from "../../../shared/t3/errors";
import { T3EnvironmentClient, webSocketUrl } from "./client";
import { Protocol1HttpReads } from "./protocol1/http-reads";
import { T3Http } from "./http";
import { OriginToken } from "./origin-token";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  upgrade: boolean;
}

/** A loopback server that records every connection and request it gets; `handle` answers plain requests. */
async function server(handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end()) {
  const seen: Seen[] = [];
  let connections = 0;
  let onUpgrade = (_req: IncomingMessage, socket: Duplex) => void socket.destroy();
  const http = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, upgrade: false });
    handle(req, res);
  });
  http.on("connection", () => connections++);
  http.on("upgrade", (req, socket) => {
    seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, upgrade: true });
    onUpgrade(req, socket);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => http.close(() => resolve())));
  cleanups.push(() => http.closeAllConnections());
  return {
    baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    seen,
    get connections() {
      return connections;
    },
    answerUpgrades(answer: typeof onUpgrade) {
      onUpgrade = answer;
    },
  };
}

function json(res: ServerResponse, body: unknown): void {
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(body));
}

async function rejection(promise: Promise<unknown>): Promise<T3Error> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(T3Error);
  return error as T3Error;
}

describe("a client bound to its origin", () => {
  it("sends a token to the origin that issued it, and refuses one another origin issued", async () => {
    const own = await server((_req, res) => json(res, {}));
    const other = await server();
    const http = new T3Http(own.baseUrl);
    await http.send({ method: "GET", path: "/api/auth/session", bearer: OriginToken.issuedBy(own.baseUrl, "own-token") });
    expect(own.seen).toEqual([{ method: "GET", url: "/api/auth/session", authorization: "Bearer own-token", upgrade: false }]);
    const refused = await rejection(http.send({ method: "GET", path: "/api/auth/session", bearer: OriginToken.issuedBy(other.baseUrl, "other-token") }));
    expect(refused.kind).toBe("unauthorized");
    expect(refused.message).not.toContain("other-token");
    expect(own.seen).toHaveLength(1);
  });

  it.each(["absolute", "scheme-relative"] as const)("refuses a %s path that names another origin, with or without a token", async (form) => {
    const own = await server();
    const other = await server();
    const http = new T3Http(own.baseUrl);
    const path = form === "absolute" ? `${other.baseUrl}/api/auth/session` : `//${new URL(other.baseUrl).host}/api/auth/session`;
    for (const bearer of [OriginToken.issuedBy(own.baseUrl, "own-token"), undefined]) {
      const refused = await rejection(http.send({ method: "GET", path, ...(bearer && { bearer }) }));
      expect(refused.message).toContain(`refused to send a request outside ${own.baseUrl}`);
    }
    expect(other.connections).toBe(0);
    expect(own.seen).toEqual([]);
  });

  it("refuses a token smuggled in a raw authorization header", async () => {
    const own = await server();
    const http = new T3Http(own.baseUrl);
    await rejection(http.send({ method: "GET", path: "/api/auth/session", headers: { Authorization: "Bearer raw" } }));
    expect(own.seen).toEqual([]);
  });

  it.each([301, 302, 303, 307, 308])("does not follow a %s redirect to another origin: the token stays where it was sent", async (status) => {
    const other = await server((_req, res) => json(res, { authenticated: true }));
    const own = await server((_req, res) => {
      res.writeHead(status, { location: `${other.baseUrl}/api/auth/session` });
      res.end();
    });
    const client = new T3EnvironmentClient(own.baseUrl);
    const token = OriginToken.issuedBy(own.baseUrl, "own-token");
    const answer = await client.http.send({ method: "GET", path: "/api/auth/session", bearer: token });
    expect(answer.status).toBe(status);
    // Through the client's typed calls a redirect is a failure, never a success read elsewhere.
    await rejection(client.authSession(token));
    await rejection(new Protocol1HttpReads(client.http).getShell({ token, generation: "upstream" }));
    expect(own.seen.map((request) => request.authorization)).toEqual(["Bearer own-token", "Bearer own-token", "Bearer own-token"]);
    expect(other.connections).toBe(0);
  });

  it("opens its socket on its own origin, with a short-lived ticket and never the token", async () => {
    const own = await server((req, res) =>
      json(res, req.url === "/api/auth/websocket-ticket" ? { ticket: "one-time-ticket", expiresAt: new Date(Date.now() + 60_000).toISOString() } : {}),
    );
    const client = new T3EnvironmentClient(own.baseUrl, { socket: { openTimeoutMs: 5_000 } });
    await rejection(client.openAuthenticatedSocket({ token: OriginToken.issuedBy(own.baseUrl, "own-token"), generation: "upstream" }, 1));
    expect(own.seen).toEqual([
      { method: "POST", url: "/api/auth/websocket-ticket", authorization: "Bearer own-token", upgrade: false },
      { method: "GET", url: "/ws?wsTicket=one-time-ticket&orchestrationProtocol=1", authorization: undefined, upgrade: true },
    ]);
    expect(webSocketUrl("https://studio.example:8443/some/path", { wsTicket: "t" })).toBe("wss://studio.example:8443/ws?wsTicket=t");
  });

  it("does not follow a socket upgrade redirected to another origin", async () => {
    const other = await server();
    const own = await server((_req, res) => json(res, { ticket: "one-time-ticket", expiresAt: new Date(Date.now() + 60_000).toISOString() }));
    own.answerUpgrades((_req, socket) => {
      socket.end(`HTTP/1.1 302 Found\r\nlocation: ${webSocketUrl(other.baseUrl, { wsTicket: "one-time-ticket" })}\r\ncontent-length: 0\r\n\r\n`);
    });
    const client = new T3EnvironmentClient(own.baseUrl, { socket: { openTimeoutMs: 5_000 } });
    const refused = await rejection(client.openAuthenticatedSocket({ token: OriginToken.issuedBy(own.baseUrl, "own-token"), generation: "upstream" }, 1));
    expect(refused.kind).toBe("network");
    expect(own.seen.filter((request) => request.upgrade)).toHaveLength(1);
    expect(other.connections).toBe(0);
  });

  it("sends nothing once retired (its machine was removed or moved)", async () => {
    const own = await server((_req, res) => json(res, {}));
    const client = new T3EnvironmentClient(own.baseUrl);
    client.retire();
    const token = OriginToken.issuedBy(own.baseUrl, "own-token");
    expect((await rejection(client.authSession(token))).kind).toBe("interrupted");
    await rejection(client.openAuthenticatedSocket({ token, generation: "upstream" }, 1));
    await rejection(client.identify());
    expect(own.connections).toBe(0);
  });
});

describe("a token bound to its origin", () => {
  it("reveals its secret for its own origin only, and never when printed or serialized", () => {
    const token = OriginToken.issuedBy("http://127.0.0.1:3773/some/path", "the-secret");
    expect(token.origin).toBe("http://127.0.0.1:3773");
    expect(token.secretFor("http://127.0.0.1:3773/api")).toBe("the-secret");
    expect(token.secretFor("http://127.0.0.1:3774")).toBeUndefined();
    expect(token.secretFor("https://127.0.0.1:3773")).toBeUndefined();
    expect(token.secretFor("http://localhost:3773")).toBeUndefined();
    const holder = { credentials: { token, generation: "upstream" } };
    for (const shown of [JSON.stringify(holder), inspect(holder, { depth: 5 }), String(token), JSON.stringify({ ...token })])
      expect(shown).not.toContain("the-secret");
    expect(token.sameAs(OriginToken.issuedBy("http://127.0.0.1:3773", "the-secret"))).toBe(true);
    expect(token.sameAs(OriginToken.issuedBy("http://127.0.0.1:3774", "the-secret"))).toBe(false);
  });
});
