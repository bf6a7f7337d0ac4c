// A mixed simulated fleet: protocol-1 and protocol-2 machines side by side, driven through the
// control API, and a protocol-1 machine upgraded in place through it.
import { afterEach, describe, expect, it } from "vitest";
import { SimFleet } from "../fleet";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function control(fleet: SimFleet, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${fleet.controlUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

describe("a mixed simulated fleet", () => {
  it("runs fork, upstream and protocol-2 machines, seeds lineage on protocol 2 and upgrades a machine in place", async () => {
    const fleet = await SimFleet.start({ envs: 3, generations: ["fork", "upstream", "v2"], seedThreads: 5, tickMs: 2 });
    cleanups.push(() => fleet.stop());
    await fleet.listenControl();
    const described = (await control(fleet, "/envs")) as { label: string; generation: string; baseUrl: string }[];
    expect(described.map((env) => env.generation)).toEqual(["fork", "upstream", "v2"]);
    const v2 = fleet.v2Servers[0]!;
    expect(v2.engine.threads.get("thread-0-worker1")?.thread.lineage).toEqual({
      parentThreadId: "thread-0",
      relationshipToParent: "subagent",
      rootThreadId: "thread-0",
    });

    const created = (await control(fleet, `/envs/${v2.label}/threads`, { title: "Hold", text: "#hold" })) as { threadId: string };
    expect(v2.engine.threads.get(created.threadId)?.runs).toHaveLength(1);
    const forked = (await control(fleet, `/envs/${v2.label}/threads/${created.threadId}/fork`, { title: "A fork" })) as { threadId: string };
    expect(v2.engine.threads.get(forked.threadId)?.thread.lineage.relationshipToParent).toBe("fork");

    const upstream = described.find((env) => env.generation === "upstream")!;
    const upgraded = (await control(fleet, `/envs/${upstream.label}/upgrade`, {})) as { baseUrl: string; generation: string };
    expect(upgraded).toEqual({ ok: true, baseUrl: upstream.baseUrl, generation: "v2" });
    const descriptor = (await (await fetch(`${upstream.baseUrl}/.well-known/t3/environment`)).json()) as { orchestrationProtocolVersion?: number };
    expect(descriptor.orchestrationProtocolVersion).toBe(2);
    expect(fleet.servers.map((server) => server.generation)).toEqual(["fork"]);
    expect(fleet.v2Servers).toHaveLength(2);
  });
});
