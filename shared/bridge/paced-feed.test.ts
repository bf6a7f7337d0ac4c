import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TranscriptItem } from "../fleet/facts";
import type { AgentView } from "../fleet/types";
import { agentView, environmentView } from "../fleet/views.testkit";
import { type AgentDetail, type BridgeBatch, type BridgeEvent, applyDetailDelta } from "./contract";
import { DEFAULT_FEED_LIMITS, PacedFeed } from "./paced-feed";
import { applyRowPatch } from "./row-patch";

const rows = (agents: AgentView[]): BridgeEvent => ({ type: "fleet.delta", agents, removed: [], environments: [], removedEnvironments: [] });
const delivery = (commandId: string) => ({ type: "delivery", delivery: { commandId } }) as unknown as BridgeEvent;
const reply = (text: string, streaming = true): TranscriptItem => ({
  type: "message",
  id: "reply",
  runId: "turn-1",
  role: "assistant",
  text,
  streaming,
  createdAt: "t",
  updatedAt: `${text.length}`,
});

/** A page: applies each batch as the store does (renderer/src/state/slices/facts.ts) and acknowledges when told. */
class Page {
  readonly agents = new Map<string, AgentView>();
  readonly details = new Map<string, AgentDetail>();
  readonly others: BridgeEvent[] = [];
  readonly batches: BridgeBatch[] = [];

  constructor(snapshot: AgentView[]) {
    for (const agent of snapshot) this.agents.set(agent.key, agent);
  }

  apply(batch: BridgeBatch): void {
    this.batches.push(batch);
    for (const event of batch.events) {
      if (event.type === "fleet.delta") {
        for (const agent of event.agents) this.agents.set(agent.key, agent);
        for (const patch of event.patches ?? []) this.agents.set(patch.key, applyRowPatch(this.agents.get(patch.key)!, patch));
        for (const key of event.removed) this.agents.delete(key);
      } else if (event.type === "agent.detail") this.details.set(event.detail.key, event.detail);
      else if (event.type === "agent.detailDelta") {
        const current = this.details.get(event.delta.key);
        if (current) this.details.set(event.delta.key, applyDetailDelta(current, event.delta));
      } else this.others.push(event);
    }
  }
}

function rig(snapshot: AgentView[] = [], limits = DEFAULT_FEED_LIMITS) {
  let readies = 0;
  const feed = new PacedFeed(() => readies++, limits);
  feed.resync(snapshot);
  const page = new Page(snapshot);
  /** What the transport does when the feed is ready: sends the next batch, if any. */
  const send = () => {
    const batch = feed.take();
    if (batch) page.apply(batch);
    return batch;
  };
  return { feed, page, send, readies: () => readies };
}

describe("a page's feed, paced by the page", () => {
  it("sends at once when the page has room, then nothing until the page acknowledges; the rest waits, coalesced", () => {
    const { feed, page, send, readies } = rig([agentView("a", "idle")], { ...DEFAULT_FEED_LIMITS, window: 1 });
    feed.push(rows([agentView("a", "running")]));
    expect(readies()).toBe(1);
    const first = send()!;
    expect(first.events).toHaveLength(1);
    for (let step = 0; step < 20; step++) feed.push(rows([agentView("a", "running", { title: `step ${step}` })]));
    feed.push(delivery("c1"));
    expect(readies()).toBe(1); // the page has not taken the first batch: no second one in flight
    expect(feed.take()).toBeUndefined();
    feed.ack(first.seq + 1); // not the batch in flight
    expect(feed.take()).toBeUndefined();
    feed.ack(first.seq);
    expect(readies()).toBe(2);
    const second = send()!;
    expect(second.seq).toBe(first.seq + 1);
    const delta = second.events.find((event) => event.type === "fleet.delta")!;
    // One update for twenty changes of one row: only the fields that changed since the page's row.
    expect(delta).toMatchObject({ agents: [], patches: [{ key: "e/a", set: { title: "step 19" } }] });
    expect(Object.keys((delta as { patches: { set: object }[] }).patches[0]!.set)).toEqual(["title"]);
    expect(page.agents.get("e/a")).toEqual(agentView("a", "running", { title: "step 19" }));
    expect(page.others).toEqual([delivery("c1")]);
    feed.ack(second.seq);
    expect(feed.take()).toBeUndefined(); // nothing changed since
  });

  it("holds at most a window of batches the page has not acknowledged", () => {
    const { feed, send } = rig([], { ...DEFAULT_FEED_LIMITS, window: 2 });
    const sent: BridgeBatch[] = [];
    for (let index = 0; index < 5; index++) {
      feed.push(delivery(`c${index}`));
      const batch = send();
      if (batch) sent.push(batch);
    }
    expect(sent.map((batch) => batch.events)).toEqual([[delivery("c0")], [delivery("c1")]]);
    feed.ack(sent[1]!.seq); // the page takes batches in order: the second's acknowledgement covers the first
    expect(send()?.events).toEqual([delivery("c2"), delivery("c3"), delivery("c4")]);
    expect(send()).toBeUndefined(); // one in flight, nothing waiting
  });

  it("bounds what one frame carries in a flood, and loses nothing across the frames after", () => {
    const limits = { ...DEFAULT_FEED_LIMITS, maxRows: 100, maxEvents: 10 };
    const fleet = Array.from({ length: 1_000 }, (_, index) => agentView(`t${index}`, "idle"));
    const { feed, page, send } = rig(fleet, limits);
    for (let round = 0; round < 5; round++) feed.push(rows(fleet.map((agent) => ({ ...agent, title: `round ${round}` }))));
    for (let index = 0; index < 35; index++) feed.push(delivery(`c${index}`));
    let batch = send();
    while (batch) {
      const delta = batch.events.find((event) => event.type === "fleet.delta");
      const carried = delta && delta.type === "fleet.delta" ? delta.agents.length + (delta.patches?.length ?? 0) : 0;
      expect(carried).toBeLessThanOrEqual(100);
      expect(batch.events.filter((event) => event.type === "delivery").length).toBeLessThanOrEqual(10);
      feed.ack(batch.seq);
      batch = send();
    }
    expect(page.batches).toHaveLength(10);
    expect([...page.agents.values()]).toEqual(fleet.map((agent) => ({ ...agent, title: "round 4" })));
    expect(page.others).toEqual(Array.from({ length: 35 }, (_, index) => delivery(`c${index}`)));
  });

  it("the page ends with the service's state whatever the order of changes and acknowledgements", () => {
    type Step =
      | { kind: "row"; agent: number; title: string; usage: number | null }
      | { kind: "remove"; agent: number }
      | { kind: "tokens"; text: string }
      | { kind: "item"; id: string }
      | { kind: "ack" };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("row" as const), agent: fc.nat(5), title: fc.string({ maxLength: 3 }), usage: fc.option(fc.nat(9)) }),
      fc.record({ kind: fc.constant("remove" as const), agent: fc.nat(5) }),
      fc.record({ kind: fc.constant("tokens" as const), text: fc.string({ minLength: 1, maxLength: 4 }) }),
      fc.record({ kind: fc.constant("item" as const), id: fc.constantFrom("c1", "c2", "c3") }),
      fc.constant({ kind: "ack" as const }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.integer({ min: 1, max: 3 }), (steps, window) => {
        const server = new Map<string, AgentView>([0, 1, 2].map((index) => [`e/t${index}`, agentView(`t${index}`, "running")]));
        let detail: AgentDetail = { key: "e/t0", items: [reply("")], loaded: true, error: null };
        const { feed, page, send } = rig([...server.values()], { ...DEFAULT_FEED_LIMITS, window });
        page.details.set(detail.key, detail);
        const inFlight: BridgeBatch[] = [];
        const sendAll = () => {
          for (let batch = send(); batch; batch = send()) inFlight.push(batch);
        };
        for (const change of steps) {
          if (change.kind === "row") {
            const key = `e/t${change.agent}`;
            const view = { ...(server.get(key) ?? agentView(`t${change.agent}`, "running")), title: change.title };
            if (change.usage === null) delete view.usage;
            else view.usage = { contextUsed: change.usage, contextMax: 10, compactsAutomatically: null, lastTurn: null, thread: null, reportedAt: "t" };
            server.set(key, view);
            feed.push(rows([view]));
          } else if (change.kind === "remove") {
            server.delete(`e/t${change.agent}`);
            feed.push({ type: "fleet.delta", agents: [], removed: [`e/t${change.agent}`], environments: [], removedEnvironments: [] });
          } else if (change.kind === "tokens") {
            const current = detail.items[0]!;
            const text = (current.type === "message" ? current.text : "") + change.text;
            detail = { ...detail, items: [reply(text), ...detail.items.slice(1)] };
            feed.push({
              type: "agent.detailDelta",
              delta: {
                key: detail.key,
                items: [],
                appended: [{ id: "reply", text: change.text, streaming: true, updatedAt: `${text.length}` }],
                loaded: true,
                error: null,
              },
            });
          } else if (change.kind === "item") {
            const item = { type: "activity", id: change.id, summary: `${change.id} ${detail.items.length}` } as unknown as TranscriptItem;
            detail = { ...detail, items: [...detail.items.filter((entry) => entry.id !== change.id), item] };
            // Moved to the end: a delta cannot say it, so the whole detail goes (electron/fleet/agent-details.ts).
            feed.push({ type: "agent.detail", detail });
          } else if (inFlight.length > 0) {
            feed.ack(inFlight.shift()!.seq);
          }
          sendAll();
          expect(inFlight.length).toBeLessThanOrEqual(window);
        }
        while (inFlight.length > 0) {
          feed.ack(inFlight.shift()!.seq);
          sendAll();
        }
        expect(page.agents).toEqual(server);
        expect(page.details.get(detail.key)).toEqual(detail);
      }),
      { numRuns: 500 },
    );
  });

  it("after a resync the page gets whole rows, and no transcript delta meant for before it", () => {
    const { feed, send } = rig([agentView("a", "idle")]);
    feed.push(rows([agentView("a", "running")]));
    send();
    feed.push({
      type: "agent.detailDelta",
      delta: { key: "e/a", items: [], appended: [{ id: "reply", text: "x", streaming: true, updatedAt: "1" }], loaded: true, error: null },
    });
    feed.resync([]); // the page reloads: a fresh snapshot with no rows, and its batch in flight is forgotten
    feed.push({
      type: "fleet.delta",
      agents: [agentView("a", "running", { title: "new" })],
      removed: [],
      environments: [environmentView()],
      removedEnvironments: [],
    });
    const batch = feed.take()!;
    expect(batch.events).toEqual([
      { type: "fleet.delta", agents: [agentView("a", "running", { title: "new" })], removed: [], environments: [environmentView()], removedEnvironments: [] },
    ]);
  });

  it("drops the transcript deltas waiting for an agent the page opens again (its answer is the whole detail)", () => {
    const { feed } = rig();
    feed.push({
      type: "agent.detailDelta",
      delta: { key: "e/a", items: [], appended: [{ id: "reply", text: "x", streaming: true, updatedAt: "1" }], loaded: true, error: null },
    });
    feed.opened("e/a");
    expect(feed.take()).toBeUndefined();
  });

  it("a page that falls too far behind on other events is resynchronized instead of queued without end", () => {
    const { feed, send, readies } = rig([], { ...DEFAULT_FEED_LIMITS, window: 1, maxPendingChars: 10_000 });
    feed.push(delivery("first"));
    send(); // in flight, never acknowledged
    for (let index = 0; index < 1_000; index++) feed.push(delivery(`c${index}`));
    expect(feed.overflowed).toBe(true);
    expect(readies()).toBe(2); // the transport is told, though the page holds a batch
    feed.resync([]);
    expect(feed.overflowed).toBe(false);
    expect(feed.take()).toBeUndefined();
  });
});
