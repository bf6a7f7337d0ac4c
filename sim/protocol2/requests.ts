// A simulated protocol-2 agent's approvals and questions (sim/protocol2/runner.ts plays them): the
// request, its item and, for a command, the provider's command item, as the real engine opens them.
import { randomUUID } from "node:crypto";
import type { AgentStep, EngineCore, Runner, ThreadState } from "./engine-types";
import * as ids from "./ids";
import type { Decision, RuntimeRequest } from "./model";

/**
 * An approval or a question. The provider's command item (for a command approval), the request
 * and its item leave together: a client sees the request and what it is about in one chunk.
 */
export function openRequest(engine: EngineCore, state: ThreadState, runner: Runner, step: Extract<AgentStep, { kind: "approval" | "question" }>): void {
  const run = runner.run;
  const turnId = runner.providerTurn?.id ?? ids.providerTurnId(state.provider, randomUUID());
  const native = `call_${randomUUID()}`;
  const nativeRef = { driver: state.provider, nativeId: native, strength: "strong" as const };
  const guarded = runner.steps[runner.index];
  if (step.kind === "approval" && step.requestKind === "command" && guarded?.kind === "tool") {
    // The provider's command item opens with the request; the guarded tool step completes it.
    const node = engine.providerNode(state, runner, ids.nativeNodeId(state.provider, native), "tool_call", "running", { nativeItemRef: nativeRef });
    const base = engine.newItem(state, run, "running", null, {
      id: ids.nativeItemId(state.provider, native),
      nodeId: node.id,
      providerTurnId: turnId,
      native,
    });
    runner.openCommand = { ...base, type: "command_execution", input: guarded.command, output: null };
    engine.putItem(state, runner.openCommand);
  }
  const requestId = ids.runtimeRequestId(state.provider, turnId, native);
  const nodeId = ids.requestNodeId(requestId);
  engine.providerNode(state, runner, nodeId, step.kind === "approval" ? "approval_request" : "user_input_request", "waiting", {
    runtimeRequestId: requestId,
    nativeItemRef: nativeRef,
  });
  const request: RuntimeRequest = {
    id: requestId,
    nodeId,
    providerTurnId: turnId,
    nativeRequestRef: nativeRef,
    kind: step.kind === "approval" ? step.requestKind : "user_input",
    status: "pending",
    responseCapability: { type: "live", providerSessionId: state.sessions[0]?.id ?? ids.providerSessionId(state.provider) },
    createdAt: engine.now(),
    resolvedAt: null,
  };
  engine.putRequest(state, request, run.id);
  const base = engine.newItem(state, run, "waiting", null, { id: ids.requestItemId(requestId), nodeId, providerTurnId: turnId, native });
  if (step.kind === "approval") {
    const labels: Record<Decision, string> = {
      accept: "Allow once",
      acceptForSession: "Allow for this session",
      acceptAlways: "Always allow",
      decline: "Deny",
      cancel: "Deny and stop",
    };
    engine.putItem(state, {
      ...base,
      type: "approval_request",
      requestId,
      requestKind: step.requestKind,
      prompt: step.prompt,
      ...(step.options && { options: step.options.map((decision) => ({ decision, label: labels[decision] })) }),
    });
  } else {
    engine.putItem(state, { ...base, title: "Questions", type: "user_input_request", requestId, questions: step.questions });
  }
  runner.blockedOn = { kind: "request", requestId };
}
