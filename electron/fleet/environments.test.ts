// Environment lifecycle against simulators: faults (kill, restart, blackhole, revoke), wake
// re-checks, rename, mute and remove.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOSTILE } from "../../shared/t3/hostile-text.testkit";
import type { SimServer } from "../../sim/protocol1/server";
import { REGISTRY_FILE } from "./registry";
import { MemorySecretStore } from "./secrets";
import { FleetService } from "./service";
import { FAST, agent, clientOf, cleanups, env, pairAll, setup, supervisorOf, until } from "./service.testkit";
import { OriginToken } from "./t3/origin-token";

describe("environment lifecycle", () => {
  it.each(["kill", "blackhole", "restart"] as const)(
    "%s: the environment goes offline within the bound, then online with the same identity and no duplicates",
    async (fault) => {
      const { sims, service } = await setup(["upstream", "fork"]);
      const sim = sims.servers[1]!;
      const threadId = sims.createThread(sim, { title: "Long job", text: "#hang" });
      await pairAll(service, sims);
      await until(service, () => agent(service, sim, threadId)?.status === "running", "running");

      const started = Date.now();
      if (fault === "kill") await sim.kill();
      if (fault === "blackhole") sim.setBlackhole(true);
      const restarting = fault === "restart" ? sim.restart() : undefined;
      if (fault !== "restart") {
        await until(service, () => env(service, sim)?.connection.phase === "offline", "offline");
        // Two missed pings at most (FAST's interval here; 10 s in production), with a second to spare on a loaded machine.
        expect(Date.now() - started).toBeLessThan(2 * FAST.socket.pingIntervalMs + 1_000);
        expect(agent(service, sim, threadId)).toMatchObject({ status: "unknown", lastKnownStatus: "running" });
        expect(agent(service, sim, threadId)!.asOf).not.toBeNull();
        if (fault === "kill") await sim.start();
        else sim.setBlackhole(false);
      } else {
        await restarting;
      }
      await until(service, () => env(service, sim)?.connection.phase === "online", "online again");
      expect(env(service, sim)!.environmentId).toBe(sim.environmentId);
      const keys = [...service.model.agents()].map((a) => a.key);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys.filter((key) => key.startsWith(sim.environmentId))).toHaveLength(1);
    },
  );

  it("after system wake every connection is re-checked: a silent host goes offline, a live one stays online", async () => {
    // Pings so rare that only the wake re-check can notice the silent host.
    const { sims, service, events } = await setup(["upstream", "fork"], { socket: { pingIntervalMs: 60_000, openTimeoutMs: 1_000 } });
    await pairAll(service, sims);
    const [silent, live] = sims.servers as [SimServer, SimServer];
    silent.setBlackhole(true);
    service.recheckAll();
    await until(service, () => env(service, silent)?.connection.phase === "offline", "silent host offline");
    await until(service, () => env(service, live)?.connection.phase === "online", "live host confirmed");
    const livePhases = events.flatMap((e) =>
      e.type === "fleet.delta" ? e.environments.filter((v) => v.environmentId === live.environmentId).map((v) => v.connection.phase) : [],
    );
    expect(livePhases).toContain("connecting"); // not trusted until it answered
    silent.setBlackhole(false);
    await until(service, () => env(service, silent)?.connection.phase === "online", "back online");
  });

  it("a revoked token gives unauthorized while the socket stays open, and no retry storm", async () => {
    // T3 keeps a revoked session's socket working: only the fleet's token re-check notices.
    const { sims, service } = await setup(["upstream", "fork"], { timing: { ...FAST.timing, tokenRecheckMs: 200 } });
    await pairAll(service, sims);
    for (const sim of sims.servers) {
      sim.auth.revoke();
      await until(service, () => env(service, sim)?.connection.phase === "unauthorized", `${sim.generation} unauthorized`);
    }
    const runtimesWaiting = sims.servers.map((sim) => supervisorOf(service, sim.environmentId).hasScheduledWork);
    expect(runtimesWaiting).toEqual([false, false]);
    // Re-pairing brings it back.
    const sim = sims.servers[0]!;
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    await until(service, () => env(service, sim)?.connection.phase === "online", "online after re-pair");
    expect(service.model.environments()).toHaveLength(2);
  });

  it("renames, mutes and removes an environment; a muted machine stays watched but quiet", async () => {
    const { sims, service, events, dataDir } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Worker" });
    await pairAll(service, sims);
    await service.request("environment.rename", { environmentId: sim.environmentId, label: "Build farm" });
    expect(env(service, sim)!.label).toBe("Build farm");
    await service.request("environment.mute", { environmentId: sim.environmentId, muted: true });
    sims.sendMessage(sim, threadId, "#fail");
    await until(service, () => agent(service, sim, threadId)?.status === "failed", "failed while muted");
    expect(events.filter((e) => e.type === "notification" && e.notification.reason === "failed")).toEqual([]);
    const reopened = await FleetService.start({ dataDir, secrets: new MemorySecretStore() });
    cleanups.push(() => reopened.stop());
    expect(reopened.model.environment(sim.environmentId)).toMatchObject({ label: "Build farm", muted: true });
    await service.request("environment.remove", { environmentId: sim.environmentId });
    expect(service.model.environments()).toEqual([]);
    expect([...service.model.agents()]).toEqual([]);
  });

  it("a label the user types is cleaned as a server's is: no escapes, controls or bidi stored or shown, and nothing visible is no name", async () => {
    const { sims, service, dataDir } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    await pairAll(service, sims);
    const { environmentId } = sim;
    await service.request("environment.rename", { environmentId, label: `Build\u202E farm\x1b[2J\n\u0000 ${HOSTILE.osc52}` });
    const shown = env(service, sim)!.label;
    expect(shown).toBe("Build farm build done");
    // Two control characters are not a name: refused with a reason, and the label stays.
    await expect(service.request("environment.rename", { environmentId, label: "\u0007\u202E" })).rejects.toThrow(/at least one visible character/);
    expect(env(service, sim)!.label).toBe(shown);
    // What is stored is what is shown.
    expect(JSON.parse(await readFile(join(dataDir, REGISTRY_FILE), "utf8")).environments[0].customLabel).toBe(shown);
  });

  it("removing a machine retires its client and forgets its token: nothing sends that token again", async () => {
    const { sims, service, secrets } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    await pairAll(service, sims);
    const removedClient = clientOf(service, sim.environmentId);
    const stored = JSON.parse((await secrets.get(sim.environmentId))!) as { token: string };
    await service.request("environment.remove", { environmentId: sim.environmentId });
    expect(await secrets.get(sim.environmentId)).toBeUndefined();
    // Work still holding the removed machine's client (a send, a transcript read) cannot reach the server.
    sim.bearersSeen.clear();
    await expect(removedClient.authSession(OriginToken.issuedBy(sim.baseUrl, stored.token))).rejects.toMatchObject({ kind: "interrupted" });
    await expect(service.request("environment.retry", { environmentId: sim.environmentId })).rejects.toThrow("not paired");
    service.recheckAll();
    // Paired again: the machine comes back with a new token, and only that one is ever offered.
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    await until(service, () => env(service, sim)?.connection.phase === "online", "online after pairing again");
    const renewed = JSON.parse((await secrets.get(sim.environmentId))!) as { token: string };
    expect(renewed.token).not.toBe(stored.token);
    expect([...sim.bearersSeen]).toEqual([renewed.token]);
  });

  it("a machine whose pairing was revoked while it was offline asks to be paired again when it returns", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    await pairAll(service, sims);
    await sim.kill();
    await until(service, () => env(service, sim)?.connection.phase === "offline", "offline");
    sim.auth.revoke();
    await sim.start();
    await until(service, () => env(service, sim)?.connection.phase === "unauthorized", "unauthorized on return");
    const notices = events.flatMap((e) => (e.type === "notification" && e.notification.environmentId === sim.environmentId ? [e.notification.reason] : []));
    expect(notices).toEqual(["offline", "unauthorized"]);
    expect(supervisorOf(service, sim.environmentId).hasScheduledWork).toBe(false);
  });

  it("a row the fleet cannot decode is skipped and shown on the machine, and the connection stays up", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Fine" });
    const other = sims.createThread(sim, { title: "Also fine" });
    await pairAll(service, sims);
    // A server bug (or a hostile server): a session whose status is not a string.
    const session = {
      threadId,
      status: 42,
      providerName: "codex",
      providerInstanceId: "codex",
      runtimeMode: "full-access",
      activeTurnId: null,
      lastError: null,
      updatedAt: new Date().toISOString(),
    };
    sim.engine.append("thread", threadId, "thread.session-set", "provider:broken", { threadId, session });
    await until(service, () => (env(service, sim)?.skippedItems?.count ?? 0) >= 1, "skip reported");
    expect(env(service, sim)!.skippedItems!.last).toMatchObject({ method: "orchestration.subscribeShell", path: "thread.session.status" });
    expect(env(service, sim)!.connection.phase).toBe("online");
    const before = agent(service, sim, other)!.updatedAt;
    sims.sendMessage(sim, other, "still listening?");
    await until(service, () => agent(service, sim, other)!.updatedAt > before, "other rows still applied");
    expect(env(service, sim)!.connection.phase).toBe("online");
  });

  it("a machine updated in place to protocol 2 keeps its row and shows the T3 version it now runs", async () => {
    const { sims, service } = await setup(["upstream", "fork"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Kept across the upgrade" });
    await pairAll(service, sims);
    expect(env(service, sim)!.serverVersion).toBe(sim.serverVersion);
    const upgraded = await sims.upgradeToV2(sim.environmentId);
    await until(
      service,
      () => env(service, sim)?.serverVersion === upgraded.serverVersion && env(service, sim)?.connection.phase === "online",
      "online with the new version",
    );
    expect(agent(service, sim, threadId)).toMatchObject({ status: "idle" });
    expect([...service.model.environments()].filter((view) => view.environmentId === sim.environmentId)).toHaveLength(1);
  });
});
