// The ids the notification policy has shown, kept per owner as digests (shared/fleet/sent-notifications.ts).
import { describe, expect, it } from "vitest";
import { idDigest, SENT_IDS_KEPT_PER_OWNER, SentNotifications } from "./sent-notifications";

/** A protocol-2 notification id: long, and differing from its neighbours in a few characters. */
const longId = (index: number) =>
  `env-1/thread-${index % 97}/needs-approval/runtime-request:provider:codex:provider-turn:provider-turn%3A019a${index.toString(16).padStart(8, "0")}-4c1e-7d2f:item-${index % 13}`;

describe("sent notification ids", () => {
  it("are told apart by their digest: 200,000 ids that differ in a few characters give 200,000 digests, each a safe integer", () => {
    const digests = new Set<number>();
    for (let index = 0; index < 200_000; index++) {
      const digest = idDigest(longId(index));
      expect(Number.isSafeInteger(digest) && digest >= 0).toBe(true);
      digests.add(digest);
    }
    expect(digests.size).toBe(200_000);
    expect(idDigest(longId(7))).toBe(idDigest(longId(7)));
  });

  it("are known per owner until the owner's newest ones push them out, or the owner leaves", () => {
    const sent = new SentNotifications();
    sent.add("env-1/thread-1", longId(1));
    expect(sent.has("env-1/thread-1", longId(1))).toBe(true);
    expect(sent.has("env-1/thread-2", longId(1)), "another owner's").toBe(false);
    expect(sent.has("env-1/thread-1", longId(2))).toBe(false);
    for (let index = 2; index <= SENT_IDS_KEPT_PER_OWNER; index++) sent.add("env-1/thread-1", longId(index));
    sent.add("env-1/thread-1", longId(1)); // seen again: the newest now
    sent.add("env-1/thread-1", longId(100));
    expect(sent.has("env-1/thread-1", longId(1))).toBe(true);
    expect(sent.has("env-1/thread-1", longId(2)), "the oldest went").toBe(false);
    expect(sent.size).toBe(SENT_IDS_KEPT_PER_OWNER);
    sent.forget("env-1/thread-1");
    expect(sent.size).toBe(0);
  });
});
