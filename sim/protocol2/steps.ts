// The scenario words of a simulated protocol-2 message (`#approval`, `#question`, `#capacity`, `#fail`…): the steps
// the scripted agent (sim/protocol2/runner.ts) plays for it.
import { PROVIDERS, type ProviderKind } from "../providers";
import type { AgentStep } from "./engine-types";
import type { Decision } from "./model";

/** Scenario words in a message script the agent (the demo and the end-to-end tests use them). */
export function stepsFromText(provider: ProviderKind, text: string): AgentStep[] {
  const has = (word: string) => new RegExp(`(^|\\s)#${word}(\\b|$)`).test(text);
  const label = PROVIDERS[provider].label;
  const steps: AgentStep[] = [];
  if (has("hold")) steps.push({ kind: "hold" });
  if (has("approval")) {
    // Codex's approvals carry no decision list on the real engine; the others' do.
    const options: Decision[] | undefined = provider === "codex" ? undefined : ["accept", "acceptForSession", "decline", "cancel"];
    steps.push({ kind: "approval", requestKind: "command", prompt: "Run `npm test`?", ...(options && { options }) });
    steps.push({ kind: "tool", command: "npm test" });
  }
  // `#ask`: the model asks the user. The real Codex cannot in T3's default interaction mode (the only
  // one simulated threads have; docs/t3-protocols.md, "Harnesses under T3"), so it asks nothing and
  // answers; the others ask as `#question` (which asks on every provider, for the window's tests).
  if (has("question") || (has("ask") && provider !== "codex")) {
    steps.push({
      kind: "question",
      questions: [
        {
          id: "scope",
          header: "Scope",
          question: "Which packages should I touch?",
          options: [
            { label: "api", description: "The API package" },
            { label: "web", description: "The web app" },
          ],
          multiSelect: true,
          required: true,
        },
        { id: "note", header: "Note", question: "Anything else?", options: [], allowCustomAnswer: true, required: false },
      ],
    });
  }
  if (has("subagent"))
    steps.push({ kind: "subagent", origin: "provider_native", prompt: "Survey the code base", title: "Explore", result: "Found 3 modules." });
  if (has("delegate"))
    steps.push({
      kind: "subagent",
      origin: "app_owned",
      prompt: "Write the migration",
      title: "Migration",
      steps: [{ kind: "reply", text: "Migration written." }],
    });
  // `#capacity[:N]`: N retries through a capacity limit (3 by default), then the run goes on (sim/protocol2/retries.ts).
  const capacity = /#capacity(?::(\d+))?/.exec(text);
  if (capacity) steps.push({ kind: "retry", failureClass: "provider_error", attempts: Number(capacity[1] ?? 3), retryDelayMs: 250 });
  const fail = /#fail(?::(\w+))?/.exec(text);
  if (fail) {
    const failureClass =
      (["provider_error", "transport_error", "permission_error", "validation_error"] as const).find((c) => c === fail[1]) ?? "provider_error";
    steps.push({ kind: "fail", failureClass, message: `${label} failed: ${failureClass.replace("_", " ")}`, code: "sim_failure" });
    return steps;
  }
  steps.push({ kind: "reply", text: `${label} reply to: ${text.replace(/#\S+/g, "").trim() || "(empty)"}`, chunks: has("stream") ? 3 : 1 });
  if (has("background")) steps.push({ kind: "background", description: "Background test watcher" });
  return steps;
}
