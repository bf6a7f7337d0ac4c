import { afterEach, describe, expect, it, vi } from "vitest";
import { SnapshotGate } from "./snapshot-gate";

/** Whether the promise has settled by the time pending microtasks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("SnapshotGate", () => {
  afterEach(() => vi.useRealTimers());

  it("lets two snapshots in at once and the next one in when a slot is given back", async () => {
    const gate = new SnapshotGate(2, 60_000);
    const first = await gate.acquire();
    await gate.acquire();
    const third = gate.acquire();
    expect(await settled(third)).toBe(false);
    first();
    expect(await settled(third)).toBe(true);
  });

  it("counts a slot given back twice once", async () => {
    const gate = new SnapshotGate(1, 60_000);
    const first = await gate.acquire();
    const second = gate.acquire();
    const third = gate.acquire();
    first();
    first();
    expect(await settled(second)).toBe(true);
    expect(await settled(third)).toBe(false);
  });

  it("takes the slot back from a server that never finishes its snapshot", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const gate = new SnapshotGate(1, 5_000);
    await gate.acquire();
    const next = gate.acquire();
    expect(await settled(next)).toBe(false);
    vi.advanceTimersByTime(5_000);
    expect(await settled(next)).toBe(true);
  });
});
