import { describe, expect, it } from "vitest";
import { holdings, type HoldingsOptions } from "./holdings";

const all = { minCount: 0, minChars: 0 };
const byPath = (roots: Record<string, unknown>, options: Partial<HoldingsOptions> = all) =>
  Object.fromEntries(holdings(roots, options).map(({ path, ...rest }) => [path, rest]));

describe("holdings (what the service holds, by path)", () => {
  it("sums a store's entries under one path, whatever their keys", () => {
    class Store {
      readonly rows = new Map([
        ["a", { title: "one" }],
        ["b", { title: "three" }],
      ]);
      readonly seen = new Set(["x", "yz"]);
      readonly log = [{ text: "hello" }];
    }
    expect(byPath({ service: { store: new Store() } })).toEqual({
      service: { objects: 1, entries: 0, chars: 0 },
      "service.store": { objects: 1, entries: 0, chars: 0 },
      "service.store.rows": { objects: 1, entries: 2, chars: 2 },
      "service.store.rows[*]": { objects: 2, entries: 0, chars: 8 },
      "service.store.seen": { objects: 1, entries: 2, chars: 3 },
      "service.store.log": { objects: 1, entries: 1, chars: 0 },
      "service.store.log[*]": { objects: 1, entries: 0, chars: 5 },
    });
  });

  it("counts an object shared by two stores once, under its shorter path, and survives cycles", () => {
    const shared = { text: "abc" };
    const root: Record<string, unknown> = { near: shared, far: { deeper: { again: shared } } };
    root.self = root;
    const found = byPath({ root });
    expect(found["root.near"]).toEqual({ objects: 1, entries: 0, chars: 3 });
    expect(found["root.far.deeper.again"]).toBeUndefined();
    expect(found.root!.objects).toBe(1);
  });

  it("reads a record keyed by data (more than 64 keys) as a store, and never runs a getter", () => {
    const record = Object.fromEntries(Array.from({ length: 70 }, (_, index) => [`id-${index}`, { n: index }]));
    let ran = false;
    const guarded = Object.defineProperty({}, "lazy", {
      enumerable: true,
      get: () => {
        ran = true;
        return "x";
      },
    });
    const found = byPath({ root: { record, guarded } });
    expect(found["root.record"]!.entries).toBe(70);
    expect(found["root.record[*]"]!.objects).toBe(70);
    expect(ran).toBe(false);
  });

  it("leaves out small paths and stops at its object limit, saying so", () => {
    const big = Array.from({ length: 50 }, () => ({}));
    expect(holdings({ root: { big, small: { a: 1 } } }, { minCount: 20, minChars: 1_000 }).map((holding) => holding.path)).toEqual(["root.big", "root.big[*]"]);
    expect(byPath({ root: { big } }, { ...all, maxObjects: 10 })["…"]!.objects).toBe(42);
  });
});
