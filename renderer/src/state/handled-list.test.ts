// The window's "handled today" list keeps what the service keeps (shared/fleet/handled.ts
// HANDLED_KEPT) and says how many of the day's entries it no longer has.
import { beforeEach, describe, expect, it } from "vitest";
import { HANDLED_KEPT, type HandledEntry, letGoWords } from "../../../shared/fleet/handled";
import { useFleet } from "./store";

const entry = (index: number): HandledEntry => ({
  id: `e-${index}`,
  at: Date.UTC(2026, 11, 5, 9) + index * 1_000,
  key: `env-1/thread-${index}`,
  agent: `Agent ${index}`,
  machine: "studio",
  action: { kind: "acknowledged" },
});

beforeEach(() => useFleet.getState().setHandled(null));

describe("the handled today list", () => {
  it("keeps the newest as entries arrive, counts those it lets go with the service's, and says how many", () => {
    const read = Array.from({ length: HANDLED_KEPT - 1 }, (_, index) => entry(HANDLED_KEPT - 2 - index));
    useFleet.getState().setHandled(read, 3);
    for (let index = HANDLED_KEPT - 1; index < HANDLED_KEPT + 2; index++) useFleet.getState().addHandled(entry(index));
    const { handled, handledLetGo } = useFleet.getState();
    expect(handled).toHaveLength(HANDLED_KEPT);
    expect(handled![0]!.id).toBe(`e-${HANDLED_KEPT + 1}`);
    expect(handledLetGo).toBe(5);
    expect(letGoWords(handledLetGo)).toBe(`5 earlier entries of today not kept: the list keeps the newest ${HANDLED_KEPT}.`);
  });

  it("says nothing of entries let go when none were", () => {
    useFleet.getState().setHandled([entry(1)]);
    expect(letGoWords(useFleet.getState().handledLetGo)).toBeNull();
    expect(letGoWords(1)).toBe(`1 earlier entry of today not kept: the list keeps the newest ${HANDLED_KEPT}.`);
  });
});
