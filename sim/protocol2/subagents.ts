// A run's subagent in the simulated protocol-2 engine: a provider-native one that reports progress
// and completes after a tick, or an app-owned one with its own child thread, whose run's end ends it
// (sim/protocol2/runner.ts plays the steps that start them).
import type { AgentStep, EngineCore, Runner, StoredEvent, ThreadState } from "./engine-types";
import * as ids from "./ids";
import { type ItemStatus, type Run, type Subagent, TERMINAL_RUN_STATUSES } from "./model";

/** What the run's player offers a subagent: go on with the run's next step, and whether the engine is halted. */
export interface SubagentHost {
  resume(): void;
  halted(): boolean;
}

export function startSubagent(
  engine: EngineCore,
  state: ThreadState,
  runner: Runner,
  step: Extract<AgentStep, { kind: "subagent" }>,
  agent: SubagentHost,
): void {
  const run = runner.run;
  const subagentId = `node:subagent:${ids.shortId()}`;
  let childThreadId: string | null = null;
  if (step.origin === "app_owned") {
    const child = engine.createThread({
      projectId: state.thread.projectId,
      title: step.title ?? "Delegated task",
      provider: state.provider,
      parent: { threadId: state.thread.id, relationship: "subagent" },
      createdBy: "agent",
      creationSource: "mcp",
    });
    childThreadId = child.thread.id;
    child.nextScript = step.steps ?? [{ kind: "reply", text: step.result ?? "Done." }];
  }
  const now = engine.now();
  const subagent: Subagent = {
    id: subagentId,
    threadId: state.thread.id,
    runId: run.id,
    parentNodeId: run.rootNodeId ?? subagentId,
    origin: step.origin,
    createdBy: "agent",
    driver: state.provider,
    providerInstanceId: state.thread.providerInstanceId,
    providerThreadId: null,
    childThreadId,
    nativeTaskRef: null,
    prompt: step.prompt,
    title: step.title ?? null,
    model: state.thread.modelSelection.model,
    status: "running",
    result: null,
    startedAt: now,
    completedAt: null,
    updatedAt: now,
  };
  const item = {
    ...engine.newItem(state, run, "running" as ItemStatus, step.title ?? null),
    type: "subagent" as const,
    subagentId,
    origin: step.origin,
    driver: state.provider,
    providerInstanceId: state.thread.providerInstanceId,
    childThreadId,
    prompt: step.prompt,
    result: null,
  };
  engine.putSubagent(state, subagent);
  engine.putItem(state, item);
  runner.blockedOn = { kind: "subagent", subagentId };
  const complete = (status: ItemStatus, result: string | null) => {
    if (state.runner !== runner || runner.blockedOn?.kind !== "subagent") return;
    const current = state.subagents.find((entry) => entry.id === subagentId)!;
    engine.putSubagent(state, { ...current, status, result, completedAt: engine.now() });
    engine.putItem(state, { ...item, status, result, completedAt: engine.now() });
    runner.blockedOn = undefined;
    agent.resume();
  };
  if (childThreadId) {
    const onEvent = (stored: StoredEvent) => {
      if (stored.event.threadId !== childThreadId || (stored.event.type !== "run.updated" && stored.event.type !== "run.created")) return;
      const childRun = stored.event.payload as Run;
      if (!TERMINAL_RUN_STATUSES.has(childRun.status)) return;
      engine.off("event", onEvent);
      const child = engine.threads.get(childThreadId!);
      const text = [...(child?.messages ?? [])].reverse().find((message) => message.role === "assistant")?.text ?? null;
      complete(childRun.status === "completed" ? "completed" : "failed", text);
    };
    engine.on("event", onEvent);
    engine.dispatch({
      type: "message.dispatch",
      createdBy: "agent",
      creationSource: "mcp",
      commandId: `delegate:${subagentId}`,
      threadId: childThreadId,
      messageId: `message-${ids.shortId()}`,
      text: step.prompt,
      attachments: [],
      dispatchMode: { type: "start_immediately" },
    });
  } else {
    const progressTimer = setTimeout(() => {
      if (agent.halted()) return;
      const current = state.subagents.find((entry) => entry.id === subagentId)!;
      engine.putSubagent(state, { ...current, progress: "Reading files…" });
      complete("completed", step.result ?? "Done.");
    }, engine.tickMs);
    runner.timer = progressTimer;
  }
}
