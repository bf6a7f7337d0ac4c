// The fleet service on a mixed fleet with a protocol-2 machine: pairing by its link, agents and
// statuses, the composer's steer/queue choice, approvals with accept-for-session, multi-question
// answers, interrupts; delivery states are the same as on protocol 1.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Delivery } from "../../../../shared/fleet/delivery";
import type { AgentView } from "../../../../shared/fleet/types";
import { serverWords } from "../../../../shared/fleet/views";
import { SimFleet } from "../../../../sim/fleet";
import { createV2Thread } from "../../../../sim/protocol2/fleet-hooks";
import type { V2SimServer } from "../../../../sim/protocol2/server";
import { MemorySecretStore } from "../../secrets";
import { FleetService } from "../../service";
import { until } from "../../service.testkit";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const FAST = {
  socket: { pingIntervalMs: 100, openTimeoutMs: 1_000 },
  timing: { baseBackoffMs: 50, maxBackoffMs: 300, stableAfterMs: 1_000, probeTimeoutMs: 300 },
};

async function setup() {
  const sims = await SimFleet.start({ envs: 2, generations: ["upstream", "v2"], tickMs: 5 });
  cleanups.push(() => sims.stop());
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-v2-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), ...FAST });
  cleanups.push(() => service.stop());
  const v2 = sims.v2Servers[0]!;
  return { sims, service, v2 };
}

const agent = (service: FleetService, sim: V2SimServer, threadId: string): AgentView | undefined => service.model.agent(`${sim.environmentId}/${threadId}`);

async function pair(service: FleetService, sims: SimFleet) {
  for (const sim of [...sims.servers, ...sims.v2Servers]) await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(
    service,
    () => [...sims.servers, ...sims.v2Servers].every((sim) => service.model.environment(sim.environmentId)?.connection.phase === "online"),
    "all online",
  );
}

describe("fleet service with a protocol-2 machine", () => {
  it("pairs by link beside a protocol-1 machine, and steers or queues on a running agent as the user chooses", async () => {
    const { sims, service, v2 } = await setup();
    const threadId = createV2Thread(v2, { title: "Long job", provider: "claudeAgent", text: "#hold" });
    await pair(service, sims);
    // Each machine says which protocol it speaks, for the machine row.
    expect(serverWords(service.model.environment(v2.environmentId)!)).toBe(`T3 ${v2.descriptor().serverVersion} · protocol 2`);
    expect(serverWords(service.model.environment(sims.servers[0]!.environmentId)!)).toMatch(/^T3 \S+ · protocol 1$/);
    await until(service, () => agent(service, v2, threadId)?.status === "running", "running");
    const key = `${v2.environmentId}/${threadId}`;
    // Steer is offered once the followed thread shows T3 can take one (the run's provider turn running).
    await until(service, () => service.intent(key).kind === "steer", "steer offered");
    expect(service.intent(key, "queue")).toMatchObject({ kind: "queue" });

    const steer = (await service.request("agent.send", { key, text: "use the new API", expectedIntent: "steer" })) as Delivery;
    await until(service, () => service.delivery(steer.commandId)?.state === "delivered", "steer delivered");
    const queue = (await service.request("agent.send", { key, text: "then write docs", expectedIntent: "queue" })) as Delivery;
    await until(service, () => service.delivery(queue.commandId)?.state === "delivered", "queued message delivered");

    // The held task ends now, whatever the steer did to the run in between.
    expect(v2.engine.release(threadId)).toBe(true);
    await until(service, () => service.delivery(queue.commandId)?.state === "answered", "queued message answered");
    expect(service.delivery(queue.commandId)!.observed).toMatchObject({ outcome: "new-turn" });
    await until(service, () => service.delivery(steer.commandId)?.state === "answered", "steer answered");
    expect(service.delivery(steer.commandId)!.observed).toMatchObject({ outcome: "steered" });
    await until(service, () => agent(service, v2, threadId)?.status === "idle", "idle");
  });

  it("answers an approval for the session and several questions, and interrupts a run", async () => {
    const { sims, service, v2 } = await setup();
    const approving = createV2Thread(v2, { title: "Tests", provider: "claudeAgent", text: "#approval" });
    const asking = createV2Thread(v2, { title: "Plan", provider: "claudeAgent", text: "#question" });
    const busy = createV2Thread(v2, { title: "Busy", provider: "codex", text: "#hold" });
    await pair(service, sims);

    await until(
      service,
      () =>
        agent(service, v2, approving)?.status === "needs-approval" &&
        agent(service, v2, approving)?.pending[0]?.kind === "approval" &&
        agent(service, v2, approving)!.pending[0]!.detail !== "command",
      "approval card",
    );
    const approval = agent(service, v2, approving)!.pending[0]!;
    expect(approval.kind === "approval" && approval.decisions.map((option) => option.decision)).toEqual(["accept", "acceptForSession", "decline", "cancel"]);
    const approved = (await service.request("agent.respondApproval", {
      key: `${v2.environmentId}/${approving}`,
      requestId: approval.requestId,
      decision: "acceptForSession",
    })) as Delivery;
    await until(service, () => service.delivery(approved.commandId)?.state === "delivered", "approval delivered");
    await until(service, () => agent(service, v2, approving)?.status === "idle", "approved run done");
    expect(v2.engine.responses.get(approval.requestId)).toEqual({ decision: "acceptForSession" });

    await until(
      service,
      () =>
        agent(service, v2, asking)?.status === "needs-input" &&
        agent(service, v2, asking)?.pending[0]?.kind === "input" &&
        (agent(service, v2, asking)!.pending[0] as { questions: unknown[] }).questions.length === 2,
      "questions",
    );
    const question = agent(service, v2, asking)!.pending[0]!;
    const answered = (await service.request("agent.respondInput", {
      key: `${v2.environmentId}/${asking}`,
      requestId: question.requestId,
      answers: { scope: ["api", "web"], note: "small" },
    })) as Delivery;
    await until(service, () => service.delivery(answered.commandId)?.state === "delivered", "answers delivered");
    await until(service, () => agent(service, v2, asking)?.status === "idle", "asker done");

    await until(service, () => agent(service, v2, busy)?.status === "running", "busy running");
    const interrupt = (await service.request("agent.interrupt", { key: `${v2.environmentId}/${busy}` })) as Delivery;
    await until(service, () => service.delivery(interrupt.commandId)?.state === "delivered", "interrupt delivered");
    await until(service, () => agent(service, v2, busy)?.status === "interrupted", "interrupted");
    const stop = (await service.request("agent.stop", { key: `${v2.environmentId}/${busy}` })) as Delivery;
    expect(stop.state).toBe("refused");
  });
});
