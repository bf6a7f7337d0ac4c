// How and when the fleet learned an agent left, read from the model as its adapters feed it: a
// removal T3 did not explain is "no longer on" its machine until T3 says deleted (the time stays
// the first one); a thread that comes back is no longer gone (issue 43).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { FleetModel } from "../../shared/fleet/model";
import { decodeWith } from "../../shared/t3/decode";
import { Protocol1Rows } from "../../shared/t3/protocol1/facts";
import { ThreadShell } from "../../shared/t3/protocol1/schemas";
import { DEPARTURES_KEPT, Departures, departureWords } from "./departures";

// The recorded rows live beside the work tree (as in shared/fleet/model.test.ts).
const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../shared/fixtures");

function world() {
  let clock = new Date(2026, 10, 29, 10, 7).getTime();
  const model = new FleetModel({ stalledAfterMs: 60_000, now: () => clock });
  model.upsertEnvironment(
    { environmentId: "env-a", label: "studio", baseUrl: "http://a", serverVersion: "0.0.42", generation: "upstream", readOnly: false, muted: false },
    { phase: "online", since: new Date(clock).toISOString() },
  );
  const learned: string[] = [];
  const departures = new Departures(
    model,
    () => clock,
    (key) => learned.push(key),
  );
  const rows = new Protocol1Rows();
  const decoded = decodeWith(ThreadShell, JSON.parse(readFileSync(resolve(fixtures, "t3-0.0.42/shell-row-completed.json"), "utf8")), "row");
  if (!decoded.ok) throw new Error(decoded.error.message);
  const row = decoded.value;
  model.applyFleetSnapshot("env-a", [rows.facts(row)]);
  return { model, departures, learned, row, rows, key: `env-a/${row.id}`, tick: (ms: number) => (clock += ms) };
}

describe("Departures", () => {
  it("says an agent whose removal T3 did not explain is no longer on its machine, then deleted once T3 says, at the time it left", () => {
    const { model, departures, learned, row, key, tick } = world();
    expect(departures.get(key)).toBeUndefined();
    model.removeAgent("env-a", row.id, "archived-or-deleted");
    expect(departureWords(departures.get(key)!, "message")).toBe("This agent is no longer on studio (archived or deleted at 10:07); the message was not sent.");
    tick(5 * 60_000);
    model.removeAgent("env-a", row.id, "deleted");
    expect(departureWords(departures.get(key)!, "command")).toBe("This agent was deleted on studio at 10:07; it was not sent.");
    expect(learned).toEqual([key, key]);
  });

  it("keeps a refusal made while T3 had not said how the agent left, and gives it back once, when T3 says", () => {
    const { model, departures, row, key } = world();
    model.removeAgent("env-a", row.id, "archived-or-deleted");
    const refused = { commandId: "c-1", agentKey: key, kind: "message" } as Delivery;
    departures.awaitHow(refused);
    expect(departures.rewordable(key)).toEqual([]);
    model.removeAgent("env-a", row.id, "deleted");
    expect(departures.rewordable(key)).toEqual([refused]);
    expect(departures.rewordable(key)).toEqual([]);
  });

  it("forgets a departure once the thread is back (unarchived), and gives no time for one already gone when first seen", () => {
    const { model, departures, row, rows, key } = world();
    model.removeAgent("env-a", row.id, "archived");
    expect(departures.get(key)).toMatchObject({ how: "archived", machine: "studio" });
    model.upsertAgent("env-a", rows.facts(row));
    expect(departures.get(key)).toBeUndefined();

    model.applyFleetSnapshot("env-a", [rows.facts({ ...row, id: "born-archived", archivedAt: row.updatedAt })]);
    expect(departureWords(departures.get("env-a/born-archived")!, "message")).toBe(
      "This agent was archived on studio; the message was not sent. Unarchive it in T3 to message it.",
    );
  });

  it("remembers the newest departures only: a day of churn stays bounded", () => {
    const { model, departures, row, rows } = world();
    const ids = Array.from({ length: DEPARTURES_KEPT + 1 }, (_, index) => `churned-${index}`);
    model.applyFleetSnapshot(
      "env-a",
      ids.map((id) => rows.facts({ ...row, id })),
    );
    for (const id of ids) model.removeAgent("env-a", id, "deleted");
    expect(departures.get(`env-a/${ids[0]}`)).toBeUndefined();
    expect(departures.get(`env-a/${ids[1]}`)?.how).toBe("deleted");
    expect(departures.get(`env-a/${ids.at(-1)}`)?.how).toBe("deleted");
  });
});
