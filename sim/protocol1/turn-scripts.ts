// What a simulated agent does in a turn: the steps a message's scenario words script (or a test
// sets with Agents.scriptNextTurn).
import { PROVIDERS, type ProviderKind } from "../providers";

export type AgentStep =
  | { kind: "reply"; text: string }
  | { kind: "approval"; detail?: string }
  /** A question with the choices that answer it (never Yes/No to a "which" question). */
  | { kind: "input"; question: string; options: { label: string; description?: string }[] }
  | { kind: "fail"; message: string; runtimeError?: boolean; partialText?: string }
  | { kind: "capacity"; message?: string }
  | { kind: "subagents"; count: number }
  | { kind: "spawn"; children: { suffix: string; text: string; provider?: string }[] }
  | { kind: "delay"; ms: number }
  | { kind: "hang" }
  /** Stays running until released (Agents.release) or interrupted: a long task, ended when a test says. */
  | { kind: "hold" };

export interface TurnScript {
  /** The turn cannot start at all (missing CLI, bad instance): session null, provider.turn.start.failed. */
  startFailure?: string;
  steps: AgentStep[];
}

/** Scenario words a user (or a test) can put in a message to script the agent's turn. */
export function scriptFromText(provider: ProviderKind, text: string): TurnScript {
  const steps: AgentStep[] = [];
  const has = (word: string) => new RegExp(`(^|\\s)#${word}(\\b|$)`).test(text);
  if (has("startfail")) return { startFailure: `Failed to start ${PROVIDERS[provider].label}: spawn ${provider} ENOENT`, steps: [] };
  const spawn = /#spawn:(\d+)/.exec(text);
  if (spawn) {
    const count = Math.min(Number(spawn[1]), 50);
    steps.push({
      kind: "spawn",
      children: Array.from({ length: count }, (_, i) => ({ suffix: `worker${i + 1}`, text: `Work item ${i + 1}` })),
    });
  }
  if (has("subagents")) steps.push({ kind: "subagents", count: 2 });
  if (has("approval")) steps.push({ kind: "approval", detail: "npm test" });
  if (has("input"))
    steps.push({
      kind: "input",
      question: "Which database should I migrate first?",
      options: [
        { label: "orders", description: "The orders database: the largest, about 40 minutes" },
        { label: "users", description: "The users database: small, a few minutes" },
      ],
    });
  if (has("slow")) steps.push({ kind: "delay", ms: 2_000 });
  if (has("capacity")) steps.push({ kind: "capacity" });
  if (has("hang")) steps.push({ kind: "hang" });
  if (has("hold")) steps.push({ kind: "hold" });
  if (has("fail") || has("crash")) {
    steps.push({
      kind: "fail",
      message: `${PROVIDERS[provider].label} turn failed: process exited with code 1`,
      runtimeError: has("crash"),
      partialText: "Working on it…",
    });
    return { steps };
  }
  steps.push({ kind: "reply", text: `${PROVIDERS[provider].label} reply to: ${text.replace(/#\S+/g, "").trim() || "(empty)"}` });
  return { steps };
}
