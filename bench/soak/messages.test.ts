// The soak's verdict on one message, counted at the server against what the fleet showed.
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { type SentMessage, tally } from "./messages";

function sent(n: number, answer: SentMessage["answer"]): SentMessage {
  return { n, tag: `#m${n}#`, text: `#m${n}# hello`, key: "env/t", machine: "m", threadId: "t", mode: "new-turn", sentAt: 0, answer, inFlightAtKill: false };
}

describe("the soak's message verdicts", () => {
  it("a receipt shown refused that later left the fleet's bounded list is refused, not lost", () => {
    const message = sent(1, { kind: "delivery", commandId: "c1", state: "sending", reason: null });
    const history = new Map([["c1", ["sending (event)", "refused (event)"]]]);
    const counts = tally([message], () => 0, new Map(), history);
    expect(counts).toMatchObject({ refused: 1, lost: 0 });
  });

  it("a message the fleet showed only as sending, then nothing, and that never reached T3, is lost", () => {
    const message = sent(2, { kind: "delivery", commandId: "c2", state: "sending", reason: null });
    const counts = tally([message], () => 0, new Map(), new Map([["c2", ["sending (event)"]]]));
    expect(counts).toMatchObject({ lost: 1 });
  });

  it("the receipt the fleet still holds wins over its history; twice at the server is duplicated", () => {
    const message = sent(3, { kind: "delivery", commandId: "c3", state: "sending", reason: null });
    const held = new Map<string, Delivery>([["c3", { commandId: "c3", state: "delivered" } as Delivery]]);
    expect(tally([message], () => 1, held, new Map([["c3", ["refused (event)"]]]))).toMatchObject({ delivered: 1, deliveredButShownRefused: 0 });
    expect(tally([message], () => 2, held)).toMatchObject({ duplicated: 1 });
  });
});
