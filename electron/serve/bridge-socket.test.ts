import { connect, type Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { BRIDGE_CLOSE_MALFORMED, type BridgeEvent, type FleetSnapshot } from "../../shared/bridge/contract";
import type { AgentView } from "../../shared/fleet/types";
import { SimFleet } from "../../sim/fleet";
import { followersOf } from "../fleet/service.testkit";
import { DEFAULT_FEED_LIMITS } from "../../shared/bridge/paced-feed";
import { DEFAULT_BRIDGE_LIMITS, snapshotMessages } from "./bridge-socket";
import { MAX_UNAUTHENTICATED_CONNECTIONS } from "./server";
import { cleanups, exchangeLaunchCode, httpRequest, openBridge, startShell } from "./shell.testkit";

function agents(environmentId: string, count: number, titleBytes = 1_000): AgentView[] {
  return Array.from(
    { length: count },
    (_, i) => ({ key: `${environmentId}/t${i}`, environmentId, threadId: `t${i}`, title: "x".repeat(titleBytes) }) as unknown as AgentView,
  );
}

type Event<T extends BridgeEvent["type"]> = Extract<BridgeEvent, { type: T }>;

describe("bridge transport", () => {
  it("sends a large first snapshot in bounded pieces, the small machines first", () => {
    const snapshot = {
      environments: [{ environmentId: "flood" }, { environmentId: "a" }, { environmentId: "b" }],
      agents: [...agents("flood", 5_000), ...agents("a", 3), ...agents("b", 2)],
      deliveries: [],
      settings: {},
      notices: ["n"],
    } as unknown as FleetSnapshot;
    const pieceBytes = 64 * 1024;
    const pieces = [...snapshotMessages(snapshot, pieceBytes)].map((text) => ({
      size: text.length,
      message: JSON.parse(text) as { type: "event"; event: BridgeEvent },
    }));
    expect(pieces.length).toBeGreaterThan(50);
    for (const piece of pieces) expect(piece.size).toBeLessThan(pieceBytes + 2_000);
    const [first, ...rest] = pieces.map((piece) => piece.message.event);
    expect(first?.type).toBe("fleet.snapshot");
    const head = (first as Event<"fleet.snapshot">).snapshot;
    expect(head.environments).toHaveLength(3);
    expect(head.notices).toEqual(["n"]);
    // The two small machines are whole in the first piece.
    expect(head.agents.filter((agent) => agent.environmentId !== "flood")).toHaveLength(5);
    const all = [...head.agents, ...rest.flatMap((event) => (event as Event<"fleet.delta">).agents)];
    expect(new Set(all.map((agent) => agent.key)).size).toBe(5_005);
    expect(rest.every((event) => event.type === "fleet.delta")).toBe(true);
  });

  it("an empty fleet is one snapshot message", () => {
    const snapshot = { environments: [], agents: [], deliveries: [], settings: {}, notices: [] } as unknown as FleetSnapshot;
    expect([...snapshotMessages(snapshot, DEFAULT_BRIDGE_LIMITS.snapshotPieceBytes)].map((text) => JSON.parse(text) as unknown)).toEqual([
      { type: "event", event: { type: "fleet.snapshot", snapshot } },
    ]);
  });

  it("queues a bounded amount for a client that does not read, then resynchronizes it with a snapshot", { timeout: 60_000 }, async () => {
    const { shell, service } = await startShell({ bridgeLimits: { ...DEFAULT_BRIDGE_LIMITS, maxQueuedBytes: 2 * 1024 * 1024 } });
    const bridge = await openBridge(shell.origin, await exchangeLaunchCode(shell.origin, shell.url));
    cleanups.push(() => bridge.ws.close());
    await bridge.next((message) => message.type === "event" && message.event.type === "fleet.snapshot");
    // The page stops reading: its socket is paused, the kernel's buffers fill up.
    const socket = (bridge.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    const big = "k".repeat(256 * 1024);
    const sent = 400; // 100 MB: far more than any socket buffer holds
    for (let i = 0; i < sent; i++) service.emit("event", { type: "ui.openAgent", key: `${i}:${big}` });
    service.emit("event", { type: "ui.openAgent", key: "last" });
    socket.resume();
    // It reads again: a fresh snapshot replaces what it missed, then new events flow as before.
    const snapshots = () => bridge.messages.filter((message) => message.type === "event" && message.event.type === "fleet.snapshot").length;
    await bridge.next(() => snapshots() === 2);
    service.emit("event", { type: "ui.openAgent", key: "after" });
    await bridge.next((message) => message.type === "event" && message.event.type === "ui.openAgent" && message.event.key === "after");
    const opened = bridge.messages.filter((message) => message.type === "event" && message.event.type === "ui.openAgent");
    expect(opened.length).toBeLessThan(sent / 2);
    // And the page can still ask for things.
    bridge.ws.send(JSON.stringify({ type: "request", id: 7, method: "settings.update", params: { notificationsPaused: true } }));
    expect(await bridge.next((message) => message.type === "response" && message.id === 7)).toMatchObject({ ok: true });
  });
});

describe("events paced by the page", () => {
  it("sends no batch past the page's window until it acknowledges, decoding the acknowledgement like any request", { timeout: 30_000 }, async () => {
    const { shell, service } = await startShell();
    const session = await exchangeLaunchCode(shell.origin, shell.url);
    const bridge = await openBridge(shell.origin, session, undefined, undefined, false);
    cleanups.push(() => bridge.ws.close());
    const { window } = DEFAULT_FEED_LIMITS;
    for (let index = 0; index < window; index++) {
      service.emit("event", { type: "ui.openAgent", key: `early ${index}` });
      await bridge.next(() => bridge.batches.length === index + 1);
    }
    for (const key of ["second", "third"]) service.emit("event", { type: "ui.openAgent", key });
    // Answers are not paced: once this one is here, a batch past the window would have been too.
    bridge.ws.send(JSON.stringify({ type: "request", id: 1, method: "settings.update", params: {} }));
    await bridge.next((message) => message.type === "response" && message.id === 1);
    expect(bridge.batches).toHaveLength(window);
    bridge.ws.send(JSON.stringify({ type: "ack", seq: bridge.batches[0]!.seq }));
    await bridge.next(() => bridge.batches.length === window + 1);
    expect(bridge.batches[window]!.events).toEqual([
      { type: "ui.openAgent", key: "second" },
      { type: "ui.openAgent", key: "third" },
      expect.objectContaining({ type: "settings" }),
    ]);
    // An acknowledgement that is not one is refused as any malformed message is.
    bridge.ws.send(JSON.stringify({ type: "ack", seq: "2" }));
    expect(await bridge.closed).toBe(BRIDGE_CLOSE_MALFORMED);
  });
});

describe("open agents belong to the page that opened them", () => {
  it("a page that goes (a reload, a closed tab) closes what it had open; another page's view of the same agent stays", { timeout: 30_000 }, async () => {
    const sims = await SimFleet.start({ envs: 1, generations: ["upstream"], tickMs: 5 });
    cleanups.push(() => sims.stop());
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Worker" });
    const key = `${sim.environmentId}/${threadId}`;
    const { shell, service } = await startShell();
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    const following = () => followersOf(service, sim.environmentId).isFollowing(threadId, "open");
    const session = await exchangeLaunchCode(shell.origin, shell.url);
    const pages = await Promise.all([1, 2].map(() => openBridge(shell.origin, session)));
    for (const [i, page] of pages.entries()) {
      page.ws.send(JSON.stringify({ type: "request", id: i, method: "agent.open", params: { key } }));
      expect(await page.next((message) => message.type === "response" && message.id === i)).toMatchObject({ ok: true });
    }
    expect(following()).toBe(true);

    pages[0]!.ws.close();
    await pages[0]!.closed;
    // The other page still shows it: still followed, and its stream still open at the server.
    pages[1]!.ws.send(JSON.stringify({ type: "request", id: 9, method: "settings.update", params: { notificationsPaused: false } }));
    await pages[1]!.next((message) => message.type === "response" && message.id === 9);
    expect(following()).toBe(true);

    // Gone without a goodbye (a tab killed): the same.
    pages[1]!.ws.terminate();
    await pages[1]!.closed;
    // The server side of the socket closes a moment after the client's: wait for what that changes.
    await vi.waitFor(() => expect(following()).toBe(false), { timeout: 5_000, interval: 20 });
    await vi.waitFor(() => expect(sim.openThreadStreams()).toEqual([]), { timeout: 5_000, interval: 20 });
  });
});

describe("headless shell limits", () => {
  function openIdle(origin: string): Promise<{ socket: Socket; closed: Promise<string> }> {
    const { port } = new URL(origin);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1");
      let received = "";
      socket.on("data", (chunk) => (received += chunk.toString("latin1")));
      const closed = new Promise<string>((resolveClosed) => socket.on("close", () => resolveClosed(received)));
      socket.on("error", () => {});
      socket.once("connect", () => resolve({ socket, closed }));
      socket.once("error", reject);
    });
  }

  it("cuts off a request whose body dribbles in", { timeout: 30_000 }, async () => {
    const { shell, host } = await startShell({ requestTimeoutMs: 1_000 });
    const { socket, closed } = await openIdle(shell.origin);
    socket.write(`POST /session HTTP/1.1\r\nhost: ${host}\r\norigin: ${shell.origin}\r\ncontent-type: application/json\r\ncontent-length: 64\r\n\r\n{"co`);
    // One more byte now and then would keep a naive server waiting forever; the shell answers 408.
    const drip = setInterval(() => socket.writable && socket.write("d"), 200);
    cleanups.push(() => clearInterval(drip));
    expect(await closed).toMatch(/^HTTP\/1\.1 408/);
  });

  it("drops connections over the cap of unauthenticated ones, and serves again once they are gone", { timeout: 30_000 }, async () => {
    const { shell } = await startShell();
    const idle = await Promise.all(Array.from({ length: MAX_UNAUTHENTICATED_CONNECTIONS }, () => openIdle(shell.origin)));
    cleanups.push(() => idle.forEach(({ socket }) => socket.destroy()));
    const extra = await openIdle(shell.origin);
    expect(await extra.closed).toBe("");
    for (const { socket } of idle) socket.destroy();
    await Promise.all(idle.map(({ closed }) => closed));
    // The shell notices each close on its side too: a fresh request gets through once it has.
    let page = await httpRequest(shell.origin, "/").catch(() => undefined);
    while (page?.status !== 200) page = await httpRequest(shell.origin, "/").catch(() => undefined);
    expect(page.status).toBe(200);
  });
});
