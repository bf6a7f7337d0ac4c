import { describe, expect, it } from "vitest";
import type { Delivery } from "./delivery";
import { agentReceipts } from "./receipts";

const KEY = "env/thread";
let clock = 0;
function delivery(patch: Partial<Delivery>): Delivery {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString();
  return {
    commandId: `c${clock}`,
    agentKey: KEY,
    kind: "message",
    state: "sending",
    text: null,
    messageId: null,
    requestId: null,
    intent: null,
    observed: null,
    reason: null,
    createdAt: at,
    updatedAt: at,
    ...patch,
  };
}

/** The lines as a reader sees them: what, state, detail and the buttons. */
function lines(deliveries: Delivery[]): string[] {
  return agentReceipts(deliveries, KEY).map((receipt) =>
    [receipt.what, receipt.state, receipt.detail, ...receipt.actions.map((action) => `[${action.kind}]`)].filter(Boolean).join(" · "),
  );
}

describe("receipts", () => {
  it("after interrupt-and-hold, each queued message is one line saying it is held, with the words of its buttons", () => {
    const withdrawFirst = delivery({ kind: "cancel-queued", state: "delivered", messageId: "m1", text: "Then update the docs" });
    const withdrawSecond = delivery({ kind: "cancel-queued", state: "delivered", messageId: "m2", text: "And cut a release" });
    const reason = "taken out of T3's queue when you interrupted";
    const first = delivery({ state: "held", text: "Then update the docs", heldFrom: "m1", reason });
    const second = delivery({ state: "held", text: "And cut a release", heldFrom: "m2", reason });
    const interrupt = delivery({ kind: "interrupt", state: "delivered" });
    expect(lines([withdrawFirst, first, withdrawSecond, second, interrupt])).toEqual([
      `“Then update the docs” · held, not sent · ${reason} · [send-now] · [discard]`,
      `“And cut a release” · held, not sent · ${reason} · [send-now] · [discard]`,
      "Interrupt · the run was interrupted",
    ]);
  });

  it("a held message sent now stays one line, showing only where it is now", () => {
    const withdraw = delivery({ kind: "cancel-queued", state: "delivered", messageId: "m1", text: "Then update the docs" });
    const held = delivery({ state: "held", text: "Then update the docs", heldFrom: "m1", reason: "taken out of T3's queue when you interrupted" });
    const sent = { ...held, state: "answered" as const, reason: null, messageId: "m9", observed: { outcome: "new-turn" as const, turnId: "r2" } };
    expect(lines([withdraw, sent])).toEqual(["“Then update the docs” · started a new turn; the agent replied"]);
    expect(lines([withdraw, { ...held, state: "discarded", reason: null }])).toEqual(["“Then update the docs” · discarded, never sent"]);
  });

  it("a message the fleet queued and then withdrew is one line: withdrawing, then withdrawn; Cancel only while it can be", () => {
    const queued = delivery({
      state: "delivered",
      text: "and rename the module",
      messageId: "m1",
      observed: { outcome: "queued", turnId: "r2", queuePosition: 1 },
    });
    expect(lines([queued])).toEqual(["“and rename the module” · queued after the running turn (position 1) · [cancel-queued]"]);
    const withdrawing = delivery({ kind: "cancel-queued", state: "accepted", messageId: "m1", text: "and rename the module" });
    expect(lines([queued, withdrawing])).toEqual(["“and rename the module” · withdrawing from the queue…"]);
    const withdrawn = { ...queued, observed: { outcome: "cancelled" as const, turnId: "r2" } };
    expect(lines([withdrawn, { ...withdrawing, state: "delivered" }])).toEqual(["“and rename the module” · withdrawn from the queue"]);
    expect(lines([queued, { ...withdrawing, state: "refused", reason: "The run already started." }])).toEqual([
      "“and rename the module” · queued after the running turn (position 1) · Could not withdraw it: The run already started. · [cancel-queued]",
    ]);
  });

  it("never says a withdrawal twice nor names it by its protocol step", () => {
    const all = lines([delivery({ kind: "cancel-queued", state: "delivered", messageId: "m7", text: "typed in T3" })]);
    expect(all).toEqual(["“typed in T3” · withdrawn from the queue"]);
    expect(all.join("\n")).not.toMatch(/Withdrawing the queued message|withdrawn.*withdrawn/);
  });

  it("a message T3 stored reached the agent only once a turn took it: stored alone it is on the server (issue 39)", () => {
    const stored = delivery({ state: "delivered", messageId: "m9", text: "Run the tests" });
    expect(lines([stored])).toEqual(["“Run the tests” · on the server; no turn has taken it yet"]);
    const started = { ...stored, observed: { outcome: "new-turn" as const, turnId: "t1" } };
    expect(lines([started])).toEqual(["“Run the tests” · started a new turn"]);
    expect(lines([{ ...started, state: "answered" }])).toEqual(["“Run the tests” · started a new turn; the agent replied"]);
  });

  it("an unconfirmed send says so once, with its reason, and offers to check again", () => {
    const reason = "The connection dropped before the server answered. Checking again on reconnect; it will never be sent twice.";
    expect(lines([delivery({ state: "uncertain", text: "hello", messageId: "m1", reason })])).toEqual([
      `“hello” · not confirmed yet · ${reason} · [check-again]`,
    ]);
  });

  it("keeps every held message and the latest others", () => {
    const held = delivery({ state: "held", text: "keep me", heldFrom: "m0" });
    const many = Array.from({ length: 10 }, (_, index) => delivery({ kind: "approval", state: "delivered", commandId: `a${index}` }));
    const receipts = agentReceipts([held, ...many], KEY, 3);
    expect(receipts.map((receipt) => receipt.delivery.commandId)).toEqual([held.commandId, "a7", "a8", "a9"]);
    expect(agentReceipts([held, delivery({ agentKey: "other/agent", text: "elsewhere" })], "other/agent")).toHaveLength(1);
  });
});
