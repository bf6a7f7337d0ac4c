// A protocol-2 machine through the connection supervisor: negotiated from the descriptor, online on
// the V2 shell, and a protocol-1 machine upgraded in place keeps its identity and agents.
import { afterEach, describe, expect, it } from "vitest";
import type { AgentFacts } from "../../../../shared/fleet/facts";
import type { ConnectionPhase } from "../../../../shared/fleet/types";
import { FLEET_SCOPES } from "../../../../shared/t3/pairing";
import { SimServer } from "../../../../sim/protocol1/server";
import { V2SimServer } from "../../../../sim/protocol2/server";
import { upgradeInPlace } from "../../../../sim/upgrade";
import { ConnectionSupervisor } from "../../supervisor";
import { T3EnvironmentClient } from "../client";
import { OriginToken } from "../origin-token";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function watch(supervisor: ConnectionSupervisor) {
  let agents = new Map<string, AgentFacts>();
  const snapshots: AgentFacts[][] = [];
  supervisor.on("fleetSnapshot", (list) => {
    snapshots.push(list);
    agents = new Map(list.map((agent) => [agent.threadId, agent]));
  });
  supervisor.on("agentUpsert", (agent) => agents.set(agent.threadId, agent));
  const until = <T>(event: "phase" | "fleetSnapshot" | "agentUpsert", check: () => T | undefined) =>
    new Promise<T>((resolve) => {
      const now = check();
      if (now !== undefined) return resolve(now);
      const listener = () => {
        const value = check();
        if (value === undefined) return;
        supervisor.off(event, listener);
        resolve(value);
      };
      supervisor.on(event, listener);
    });
  return { agents: () => agents, snapshots, until };
}

describe("protocol 2 through the connection supervisor", () => {
  it("negotiates protocol 2 from the descriptor and goes online with the V2 shell's agents", async () => {
    const sim = await new V2SimServer({ tickMs: 2 }).start();
    cleanups.push(() => sim.stop());
    sim.engine.addProject({ id: "p1", title: "Repo", workspaceRoot: "/repo", defaultModelSelection: null, scripts: [] });
    const threadId = sim.engine.createThread({ projectId: "p1", title: "Task" }).thread.id;
    const token = sim.auth.issueSession({ scopes: [...FLEET_SCOPES], role: "client", label: "t" }).token;
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "upstream",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => OriginToken.issuedBy(sim.baseUrl, token),
    });
    cleanups.push(() => supervisor.stop());
    const seen = watch(supervisor);
    supervisor.start();
    await seen.until<ConnectionPhase>("phase", () => (supervisor.phase.phase === "online" ? supervisor.phase : undefined));
    expect(supervisor.protocol).toBe(2);
    expect(seen.agents().get(threadId)).toMatchObject({ title: "Task", run: { phase: "idle" } });
  });

  it("follows a machine upgraded in place from protocol 1 to 2: same environment, same agents, fresh cursors", async () => {
    const v1 = await new SimServer({ generation: "upstream", tickMs: 2 }).start();
    cleanups.push(() => v1.stop());
    v1.engine.dispatch({ type: "project.create", commandId: "p", projectId: "p1", title: "Repo", workspaceRoot: "/repo", createdAt: v1.engine.now() });
    for (const id of ["alpha", "beta"]) {
      v1.engine.dispatch({
        type: "thread.create",
        commandId: `t-${id}`,
        threadId: id,
        projectId: "p1",
        title: id,
        modelSelection: { instanceId: "codex", model: "gpt-5.4" },
        runtimeMode: "full-access",
        interactionMode: "default",
        branch: null,
        worktreePath: null,
        createdAt: v1.engine.now(),
      });
    }
    // Many protocol-1 events, so a reused protocol-1 cursor would skip every protocol-2 event.
    for (let i = 0; i < 20; i++) v1.engine.dispatch({ type: "thread.meta.update", commandId: `m-${i}`, threadId: "beta", title: `beta ${i}` });
    const token = v1.auth.issueSession({ scopes: [...FLEET_SCOPES], role: "client", label: "t" }).token;
    const supervisor = new ConnectionSupervisor({
      environmentId: v1.environmentId,
      generation: "upstream",
      client: new T3EnvironmentClient(v1.baseUrl),
      token: async () => OriginToken.issuedBy(v1.baseUrl, token),
      timing: { baseBackoffMs: 5, maxBackoffMs: 20 },
    });
    cleanups.push(() => supervisor.stop());
    const seen = watch(supervisor);
    supervisor.start();
    await seen.until("phase", () => (supervisor.phase.phase === "online" ? true : undefined));
    expect(supervisor.protocol).toBe(1);
    expect([...seen.agents().keys()].sort()).toEqual(["alpha", "beta"]);

    const v2 = await upgradeInPlace(v1, { tickMs: 2 });
    cleanups.push(() => v2.stop());
    await seen.until("phase", () => (supervisor.protocol === 2 && supervisor.phase.phase === "online" ? true : undefined));
    expect([...seen.agents().keys()].sort()).toEqual(["alpha", "beta"]);
    expect(seen.agents().get("beta")?.title).toBe("beta 19");

    // Live protocol-2 changes arrive although their sequences are below protocol 1's.
    v2.engine.dispatch({
      type: "message.dispatch",
      createdBy: "user",
      creationSource: "web",
      commandId: "c1",
      threadId: "alpha",
      messageId: "m1",
      text: "hello",
      attachments: [],
      dispatchMode: { type: "queue_after_active" },
    });
    await seen.until("agentUpsert", () => (seen.agents().get("alpha")?.run.phase === "completed" ? true : undefined));
  });

  it("reads the descriptor again when the old protocol's socket gets a 426, and connects with protocol 2 at once", async () => {
    const v1 = await new SimServer({ generation: "upstream", tickMs: 2 }).start();
    cleanups.push(() => v1.stop());
    v1.engine.dispatch({ type: "project.create", commandId: "p", projectId: "p1", title: "Repo", workspaceRoot: "/repo", createdAt: v1.engine.now() });
    v1.engine.dispatch({
      type: "thread.create",
      commandId: "t",
      threadId: "alpha",
      projectId: "p1",
      title: "alpha",
      modelSelection: { instanceId: "codex", model: "gpt-5.4" },
      runtimeMode: "full-access",
      interactionMode: "default",
      branch: null,
      worktreePath: null,
      createdAt: v1.engine.now(),
    });
    const token = v1.auth.issueSession({ scopes: [...FLEET_SCOPES], role: "client", label: "t" }).token;
    let upgraded: V2SimServer | undefined;
    let descriptorReads = 0;
    /** The machine is upgraded right after the supervisor read its (protocol-1) descriptor. */
    class UpgradedMeanwhile extends T3EnvironmentClient {
      override async identify() {
        const descriptor = await super.identify();
        descriptorReads++;
        if (!upgraded) {
          upgraded = await upgradeInPlace(v1, { tickMs: 2 });
          cleanups.push(() => upgraded!.stop());
        }
        return descriptor;
      }
    }
    const phasesSeen: string[] = [];
    const supervisor = new ConnectionSupervisor({
      environmentId: v1.environmentId,
      generation: "upstream",
      client: new UpgradedMeanwhile(v1.baseUrl),
      token: async () => OriginToken.issuedBy(v1.baseUrl, token),
    });
    cleanups.push(() => supervisor.stop());
    supervisor.on("phase", (phase) => phasesSeen.push(phase.phase));
    const seen = watch(supervisor);
    supervisor.start();
    await seen.until("phase", () => (supervisor.phase.phase === "online" ? true : undefined));
    expect(supervisor.protocol).toBe(2);
    expect(descriptorReads).toBe(2);
    expect(phasesSeen).not.toContain("backoff");
    expect([...seen.agents().keys()]).toEqual(["alpha"]);
  });
});
