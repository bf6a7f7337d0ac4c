import { afterEach, describe, expect, it } from "vitest";
import { SimFleet } from "./fleet";

let fleet: SimFleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

async function control(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${fleet!.controlUrl}${path}`, { method, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return response.json();
}

describe("the control API's soak queries", () => {
  it("counts each thread's user messages at the server, also across an in-place upgrade to protocol 2", async () => {
    fleet = await SimFleet.start({ envs: 1, generations: ["upstream"], tickMs: 5 });
    await fleet.listenControl();
    const label = fleet.servers[0]!.label;
    const { threadId } = (await control("POST", `/envs/${label}/threads`, { title: "Counted" })) as { threadId: string };
    await control("POST", `/envs/${label}/threads/${threadId}/message`, { text: "[tag-1] before the upgrade" });
    await control("POST", `/envs/${label}/upgrade`);
    await control("POST", `/envs/${label}/threads/${threadId}/message`, { text: "[tag-2] after the upgrade" });
    const messages = (await control("GET", `/envs/${label}/user-messages`)) as Record<string, string[]>;
    expect(messages[threadId]).toEqual(["[tag-1] before the upgrade", "[tag-2] after the upgrade"]);
  });

  it.each(["fork", "v2"] as const)("lists live and archived threads, not deleted ones, after churn (%s)", async (generation) => {
    fleet = await SimFleet.start({ envs: 1, generations: [generation], tickMs: 5 });
    await fleet.listenControl();
    const label = (fleet.servers[0] ?? fleet.v2Servers[0])!.label;
    const create = async (title: string) => ((await control("POST", `/envs/${label}/threads`, { title })) as { threadId: string }).threadId;
    const kept = await create("Kept");
    const archived = await create("Archived");
    const deleted = await create("Deleted");
    await control("POST", `/envs/${label}/threads/${archived}/archive`, {});
    await control("POST", `/envs/${label}/threads/${deleted}/delete`, {});
    await control("POST", `/envs/${label}/threads/${kept}/rename`, { title: "Renamed" });
    const list = (await control("GET", `/envs/${label}/thread-list`)) as { live: string[]; archived: string[] };
    expect(list.live).toEqual(expect.arrayContaining([kept, archived]));
    expect(list.live).not.toContain(deleted);
    expect(list.archived).toEqual([archived]);
  });
});
