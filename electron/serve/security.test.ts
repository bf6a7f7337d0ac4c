// The headless shell as an attacker on the same machine would try it: malformed requests before
// any authentication, hostile frames, foreign Host and Origin, a replayed launch link, fuzzed bridge
// requests, and a hunt for secrets in everything the shell wrote or sent.
import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BRIDGE_CLOSE_MALFORMED, BRIDGE_CLOSE_UNAUTHORIZED, BridgeRequests, MAX_BRIDGE_FRAME_BYTES, type BridgeMethod } from "../../shared/bridge/contract";
import { SimFleet } from "../../sim/fleet";
import { SimServer } from "../../sim/protocol1/server";
import { until } from "../fleet/service.testkit";
import { cleanups, exchangeLaunchCode, httpRequest, openBridge, rawExchange, type ShellUnderTest, startShell } from "./shell.testkit";

/** The shell still serves its page and opens a bridge for a fresh launch link. */
async function stillServing(under: ShellUnderTest): Promise<void> {
  expect((await httpRequest(under.shell.origin, "/")).status).toBe(200);
  const bridge = await openBridge(under.shell.origin, await exchangeLaunchCode(under.shell.origin, under.shell.newLaunchUrl()));
  expect(await bridge.next((message) => message.type === "event")).toMatchObject({ event: { type: "fleet.snapshot" } });
  bridge.ws.close();
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe("before authentication", () => {
  it("answers malformed requests and upgrades with an error and keeps serving", async () => {
    const under = await startShell();
    const { host, shell } = under;
    const upgrade = `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: t3fleet.bridge.v1\r\nOrigin: ${shell.origin}\r\n`;
    const attempts: [string, string, number[]][] = [
      ["GET // with an upgrade (crashed new URL before)", `GET // HTTP/1.1\r\nHost: ${host}\r\n${upgrade}\r\n`, [404]],
      ["GET //", `GET // HTTP/1.1\r\nHost: ${host}\r\n\r\n`, [400]],
      ["absolute-form URL", `GET http://evil.example/ HTTP/1.1\r\nHost: ${host}\r\n\r\n`, [400]],
      ["asterisk-form", `OPTIONS * HTTP/1.1\r\nHost: ${host}\r\n\r\n`, [400]],
      ["broken percent-encoding", `GET /%E0%A4%A HTTP/1.1\r\nHost: ${host}\r\n\r\n`, [400]],
      ["upgrade with a bad URL", `GET /%ZZ/../bridge HTTP/1.1\r\nHost: ${host}\r\n${upgrade}\r\n`, [404]],
      ["upgrade to //bridge", `GET //bridge HTTP/1.1\r\nHost: ${host}\r\n${upgrade}\r\n`, [404]],
      ["huge headers", `GET / HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`, [431]],
      ["huge upgrade headers", `GET /bridge HTTP/1.1\r\nHost: ${host}\r\n${upgrade}X-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`, [431]],
      ["garbage request line", "\u0000\u0001 not http at all\r\n\r\n", [400]],
      ["NUL in a header", `GET / HTTP/1.1\r\nHost: ${host}\r\nX-A: a\u0000b\r\n\r\n`, [400]],
      ["no Host", "GET / HTTP/1.1\r\n\r\n", [400, 421]],
      [
        "upgrade without a key",
        `GET /bridge HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: t3fleet.bridge.v1\r\nOrigin: ${shell.origin}\r\n\r\n`,
        [400],
      ],
      [
        "POST /session with a huge body",
        `POST /session HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${shell.origin}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n${"x".repeat(100_000)}`,
        [413],
      ],
      [
        "POST /session with broken JSON",
        `POST /session HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${shell.origin}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"cod`,
        [403],
      ],
    ];
    for (const [name, bytes, statuses] of attempts) {
      const answer = await rawExchange(shell.origin, bytes);
      expect(statuses, `${name}: ${answer.slice(0, 60)}`).toContain(statusOf(answer));
    }
    await stillServing(under);
  });

  it("refuses every request whose Host is not the shell's own loopback address (DNS rebinding)", async () => {
    const under = await startShell();
    const { port } = new URL(under.shell.origin);
    for (const host of ["evil.example", `evil.example:${port}`, `localhost:${port}`, `127.0.0.1:${Number(port) + 1}`, `[::1]:${port}`, `0.0.0.0:${port}`]) {
      expect((await httpRequest(under.shell.origin, "/", { headers: { host } })).status, host).toBe(421);
      expect(await exchangeLaunchCode(under.shell.origin, under.shell.url, { host, origin: under.shell.origin }), host).toBeUndefined();
      await expect(openBridge(under.shell.origin, "any", { host, origin: under.shell.origin }), host).rejects.toThrow("HTTP 421");
    }
    await stillServing(under);
  });

  it("refuses the bridge and the code exchange without the shell's own Origin", async () => {
    const under = await startShell();
    const { shell } = under;
    for (const origin of [undefined, "http://evil.example", "null", `http://localhost:${new URL(shell.origin).port}`, "http://127.0.0.1:3773"]) {
      const headers: Record<string, string> = origin === undefined ? {} : { origin };
      expect(await exchangeLaunchCode(shell.origin, shell.url, headers), String(origin)).toBeUndefined();
      await expect(openBridge(shell.origin, "any", headers), String(origin)).rejects.toThrow("HTTP 403");
    }
    // Those attempts did not spend the printed code.
    expect(await exchangeLaunchCode(shell.origin, shell.url)).toBeDefined();
  });
});

describe("the launch link", () => {
  it("opens once: its code is spent by the first page, a copy opens nothing, the tab's session keeps working", async () => {
    const { shell } = await startShell();
    const session = await exchangeLaunchCode(shell.origin, shell.url);
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await exchangeLaunchCode(shell.origin, shell.url), "the same link from history or another browser").toBeUndefined();

    const first = await openBridge(shell.origin, session);
    await first.next((message) => message.type === "event");
    first.ws.close();
    const reload = await openBridge(shell.origin, session);
    expect(await reload.next((message) => message.type === "event"), "a reload of the same tab").toMatchObject({ event: { type: "fleet.snapshot" } });
    reload.ws.close();

    for (const stranger of [undefined, "forged-session", session!.slice(0, -1) + (session!.endsWith("A") ? "B" : "A")]) {
      const bridge = await openBridge(shell.origin, stranger);
      expect(await bridge.closed).toBe(BRIDGE_CLOSE_UNAUTHORIZED);
      expect(bridge.messages, "nothing is sent to a socket without a session").toEqual([]);
    }
  });

  it("sets no cookie anywhere, so no other server on 127.0.0.1 ever receives a secret", async () => {
    const { shell } = await startShell();
    const answers = [await httpRequest(shell.origin, "/"), await httpRequest(shell.origin, "/app.js")];
    const code = new URL(shell.url).hash.slice("#code=".length);
    answers.push(
      await httpRequest(shell.origin, "/session", {
        method: "POST",
        headers: { origin: shell.origin, "content-type": "application/json" },
        body: JSON.stringify({ code }),
      }),
    );
    for (const answer of answers) expect(answer.headers["set-cookie"]).toBeUndefined();
  });
});

describe("hostile frames", () => {
  it("closes a socket that sends an oversized frame (1009) or invalid UTF-8 (1007), and only that socket", async () => {
    const under = await startShell();
    const { shell } = under;
    const session = await exchangeLaunchCode(shell.origin, shell.url);
    const bystander = await openBridge(shell.origin, session);
    await bystander.next((message) => message.type === "event");

    const oversized = await openBridge(shell.origin, session);
    oversized.ws.send("x".repeat(MAX_BRIDGE_FRAME_BYTES + 1));
    expect(await oversized.closed).toBe(1009);

    const invalid = await openBridge(shell.origin, session);
    invalid.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await invalid.closed).toBe(1007);

    const binary = await openBridge(shell.origin, session);
    binary.ws.send(Buffer.from("{}"), { binary: true });
    expect(await binary.closed).toBe(BRIDGE_CLOSE_MALFORMED);

    bystander.ws.send(JSON.stringify({ type: "request", id: 7, method: "settings.update", params: {} }));
    expect(await bystander.next((message) => message.type === "response" && message.id === 7)).toMatchObject({ ok: true });
    bystander.ws.close();
    await stillServing(under);
  });

  it("answers every fuzzed request to every bridge method with a result or a clear error, never a crash", async () => {
    const under = await startShell();
    const { shell } = under;
    const bridge = await openBridge(shell.origin, await exchangeLaunchCode(shell.origin, shell.url));
    await bridge.next((message) => message.type === "event");
    // Every method, link.open included: this service has no openExternal, so nothing leaves the test.
    const methods = Object.keys(BridgeRequests) as BridgeMethod[];
    // Plausible shapes (right keys, hostile values) reach deeper than arbitrary values alone.
    const hostileString = fc.oneof(
      fc.string(),
      fc.string({ unit: "grapheme", maxLength: 50 }),
      fc.constantFrom("", "../../etc/passwd", "javascript:alert(1)", "<script>alert(1)</script>", "\u0000", "a/b", "x".repeat(5_000)),
    );
    const hostileValue = fc.oneof(hostileString, fc.anything(), fc.integer(), fc.boolean(), fc.constant(null));
    const plausibleParams = fc.dictionary(
      fc.constantFrom(
        "input",
        "token",
        "label",
        "environmentId",
        "muted",
        "key",
        "text",
        "expectedIntent",
        "requestId",
        "decision",
        "answers",
        "commandId",
        "notifications",
        "notificationsPaused",
        "stalledAfterMs",
        "contextWarningPercent",
        "finishedWithChangesInInbox",
        "url",
        "__proto__",
        "constructor",
      ),
      hostileValue,
    );
    let id = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...methods), fc.oneof(plausibleParams, fc.anything()), async (method, params) => {
        const requestId = ++id;
        bridge.ws.send(JSON.stringify({ type: "request", id: requestId, method, params }));
        const answer = await bridge.next((message) => message.type === "response" && message.id === requestId);
        if (answer.type === "response" && !answer.ok) {
          expect(answer.error.message.length).toBeGreaterThan(0);
          expect(answer.error.kind).not.toBe("internal");
        }
      }),
      { numRuns: 300 },
    );
    // Unknown methods and hostile envelopes: an error answer or the malformed-message close.
    bridge.ws.send(JSON.stringify({ type: "request", id: ++id, method: "__proto__", params: {} }));
    expect(await bridge.next((message) => message.type === "response" && message.id === id)).toMatchObject({ ok: false });
    await stillServing(under);
    bridge.ws.close();
  });

  it("closes the socket on any frame that is not a bridge request, and keeps serving", async () => {
    const under = await startShell();
    const { shell } = under;
    const session = await exchangeLaunchCode(shell.origin, shell.url);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc
            .record({
              type: fc.constant("request"),
              id: fc.oneof(fc.double({ noInteger: true }), fc.string(), fc.constant(-1)),
              method: fc.anything(),
              params: fc.anything(),
            })
            .map((value) => JSON.stringify(value)),
        ),
        async (frame) => {
          const bridge = await openBridge(shell.origin, session);
          bridge.ws.send(frame);
          expect(await bridge.closed).toBe(BRIDGE_CLOSE_MALFORMED);
        },
      ),
      { numRuns: 60, examples: [["[]"], ["null"], ['{"type":"request"}'], ['{"type":"request","id":1e400,"method":"x"}']] },
    );
    await stillServing(under);
  });
});

describe("secrets", () => {
  it("never shows a bearer token or pairing code in a log line, a bridge message or a file", async () => {
    const under = await startShell();
    const { shell, service, logs, dataDir } = under;
    const sim = await new SimServer({ generation: "upstream", tickMs: 5 }).start();
    cleanups.push(() => sim.stop());
    const bridge = await openBridge(shell.origin, await exchangeLaunchCode(shell.origin, shell.url));
    await bridge.next((message) => message.type === "event");
    const pairingUrl = sim.pairingUrl();
    const pairingCode = new URLSearchParams(new URL(pairingUrl).hash.slice(1)).get("token")!;
    let id = 0;
    const ask = async (method: string, params: unknown) => {
      const requestId = ++id;
      bridge.ws.send(JSON.stringify({ type: "request", id: requestId, method, params }));
      return bridge.next((message) => message.type === "response" && message.id === requestId);
    };
    expect(await ask("pair.inspect", { input: pairingUrl })).toMatchObject({ ok: true });
    expect(await ask("pair.confirm", { input: pairingUrl })).toMatchObject({ ok: true });
    // Spent and invented codes come back as errors that quote the link: they must not quote the code.
    await ask("pair.confirm", { input: pairingUrl });
    await ask("pair.confirm", { input: `${sim.baseUrl}/pair?token=ZZZZZZZZZZZZ` });
    await ask("pair.confirm", { input: sim.baseUrl, token: "QQQQQQQQQQQQ" });
    await ask("pair.inspect", { input: "http://127.0.0.1:1/pair#token=WWWWWWWWWWWW" });
    const bearerTokens = sim.auth.issuedTokens();
    expect(bearerTokens.length).toBeGreaterThan(0);
    await service.stop();

    const files: string[] = [];
    for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) files.push(await readFile(join(entry.parentPath, entry.name), "utf8"));
    }
    const everything = [...logs, ...bridge.messages.map((message) => JSON.stringify(message)), ...files].join("\n");
    for (const secret of [...bearerTokens, pairingCode, "ZZZZZZZZZZZZ", "QQQQQQQQQQQQ", "WWWWWWWWWWWW"]) expect(everything).not.toContain(secret);
    bridge.ws.close();
  });
});

describe("a message's commandId", () => {
  // The page chooses each message's commandId so that a resend after a lost answer is the same send
  // (issue 43): a client replaying one, at once or under another text or agent, must not get a second message to T3.
  it("replayed at once, or under another text or agent, gives one message at T3 and a clear refusal for the rest", async () => {
    const { shell, service } = await startShell();
    const sims = await SimFleet.start({ envs: 1, generations: ["upstream"], tickMs: 5 });
    cleanups.push(() => sims.stop());
    const sim = sims.servers[0]!;
    const [target, other] = [sims.createThread(sim, { title: "Target" }), sims.createThread(sim, { title: "Other" })];
    const dispatched: string[] = [];
    const dispatch = sim.engine.dispatch.bind(sim.engine);
    sim.engine.dispatch = (command) => {
      dispatched.push(command.commandId);
      return dispatch(command);
    };
    const bridge = await openBridge(shell.origin, await exchangeLaunchCode(shell.origin, shell.url));
    await bridge.next((message) => message.type === "event");
    let id = 0;
    const ask = async (method: string, params: unknown) => {
      const requestId = ++id;
      bridge.ws.send(JSON.stringify({ type: "request", id: requestId, method, params }));
      return bridge.next((message) => message.type === "response" && message.id === requestId);
    };
    expect(await ask("pair.confirm", { input: sim.pairingUrl() })).toMatchObject({ ok: true });
    const key = (threadId: string) => `${sim.environmentId}/${threadId}`;
    await until(service, () => [target, other].every((threadId) => service.model.agent(key(threadId))?.status === "idle"), "both idle");

    const commandId = randomUUID();
    const replays = await Promise.all(
      Array.from({ length: 20 }, () => ask("agent.send", { key: key(target), text: "only once", expectedIntent: "new-turn", commandId })),
    );
    for (const answer of replays) expect(answer).toMatchObject({ ok: true, result: { commandId, text: "only once" } });
    const refusal = { ok: false, error: { kind: "invalid", message: "This command id belongs to another message; nothing was sent." } };
    expect(await ask("agent.send", { key: key(target), text: "something else", expectedIntent: "new-turn", commandId })).toMatchObject(refusal);
    expect(await ask("agent.send", { key: key(other), text: "only once", expectedIntent: "new-turn", commandId })).toMatchObject(refusal);
    for (const hostile of ["../../etc/passwd", "", "x".repeat(5_000), commandId.toUpperCase().replace(/-/g, "")])
      expect(await ask("agent.send", { key: key(target), text: "only once", expectedIntent: "new-turn", commandId: hostile })).toMatchObject({
        ok: false,
        error: { kind: "invalid" },
      });
    await until(service, () => service.delivery(commandId)?.state === "answered", "answered");
    const userTexts = (threadId: string) => sim.engine.threads.get(threadId)!.messages.flatMap((m) => (m.role === "user" ? [m.text] : []));
    expect(userTexts(target)).toEqual(["only once"]);
    expect(userTexts(other)).toEqual([]);
    expect(dispatched.filter((dispatchedId) => dispatchedId === commandId)).toHaveLength(1);
    bridge.ws.close();
  });
});
