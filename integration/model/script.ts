// What the scripted model answers, chosen from the conversation the harness sent (as the stand-in
// Codex chooses from the prompt, ../shared/tools/fake-codex.mjs): the same words trigger the same
// script whichever API the harness speaks. Pure: the wire encoders (wire.ts) turn a plan into the
// API's own stream, and the server (scripted-model-server.ts) keeps the little state it needs.

/** A tool the harness offered the model, by its own name, with what kind of work it does. */
export interface OfferedTool {
  name: string;
  kind: ToolKind;
}

export type ToolKind = "shell" | "write" | "question" | "subagent" | "other";

/** The conversation as every API reduces to it for choosing a script. */
export interface Conversation {
  /** Texts the user wrote (harness wrappers such as `<environment_context>` removed), oldest first. */
  userTexts: string[];
  /** True when the newest message is the result of a tool call the model made. */
  endsWithToolResult: boolean;
  /** The newest tool result's text, when `endsWithToolResult`. */
  toolResult: string;
  /** Tool results anywhere in the conversation: a script calls a tool once per conversation, never in a loop. */
  toolResults: number;
  tools: OfferedTool[];
}

export interface Usage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

export type Plan =
  | {
      kind: "text";
      text: string;
      chunkDelayMs: number;
      usage: Usage;
      /** The stream waits before this chunk until the test releases it (ScriptedModelServer.release) or the client closes it. */
      holdAtChunk?: number;
    }
  | { kind: "tool"; tool: string; toolKind: ToolKind; input: Record<string, unknown>; usage: Usage }
  | { kind: "error"; status: 400 | 401 | 429 | 500; message: string; retryAfterS?: number; shouldRetry: boolean };

/** The reply to an ordinary prompt: tests find it in T3's transcript. */
export const PLAIN_REPLY = "Scripted model reply.";
/**
 * A slow reply's words and pace (~8 s). Asked to be "held", it holds halfway until the test releases it, so a message can be
 * sent mid-reply however long T3 and the fleet take on a busy machine; the rest (~4 s) streams after the
 * release, time for a harness that takes a message into the running reply to close this stream.
 */
export const SLOW_WORDS = 40;
export const SLOW_HOLD_AT_WORD = 20;
export const SLOW_CHUNK_MS = 200;
/** An endless reply streams for this long unless the harness interrupts it first. */
export const ENDLESS_WORDS = 600;
/** What a tool call writes, so a test can compare the workspace with `git diff` and the tool result. */
export const WRITTEN_FILE = "scripted-change.txt";
export const WRITTEN_TEXT = "written by the scripted model\n";
export const SHELL_MARKER = "scripted-shell-ran";
/** What a delegated subagent is asked: a hello, or (a failing subagent) a request the model refuses inside the subagent's own conversation. */
export const SUBAGENT_PROMPT = "say hello from the subagent";
/** A subagent whose reply streams for ~8 s (SLOW_WORDS), so its parent's turn ends before it does. */
export const SLOW_SUBAGENT_PROMPT = "say hello slowly from the subagent";
export const FAILING_SUBAGENT_PROMPT = "refuse this subagent request";
/** A capacity limit's retry-after (OpenCode gave up on a 3 s one; Codex and OpenCode wait it out between tries). */
export const CAPACITY_RETRY_AFTER_S = 1;

const CLASSIFY: [RegExp, ToolKind][] = [
  [/^(shell|bash|exec_command|local_shell|run_command|container\.exec)$/i, "shell"],
  [/^(write|write_file|create_file|apply_patch)$/i, "write"],
  [/^(askuserquestion|request_user_input|question|ask_user)$/i, "question"],
  [/^(task|agent|spawn_agent|delegate)$/i, "subagent"],
];

export function toolKind(name: string): ToolKind {
  return CLASSIFY.find(([pattern]) => pattern.test(name))?.[1] ?? "other";
}

/** Rough token counts, reported in every response (harnesses show them as context use). */
function usageFor(conversation: Conversation, output: string): Usage {
  const input = conversation.userTexts.join(" ").length + conversation.toolResult.length + 400 * conversation.tools.length;
  return { inputTokens: Math.max(1, Math.ceil(input / 4)), cachedInputTokens: 0, outputTokens: Math.max(1, Math.ceil(output.length / 4)), reasoningTokens: 0 };
}

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index + 1}`).join(" ") + ".";

/** Arguments for a harness's own shell tool, in the shape that tool takes. */
function shellInput(tool: string, command: string): Record<string, unknown> {
  switch (tool.toLowerCase()) {
    case "shell":
    case "local_shell":
    case "container.exec":
      return { command: ["bash", "-lc", command] };
    case "exec_command":
      return { cmd: command };
    default:
      return { command, description: "Run the scripted command" };
  }
}

function questionInput(tool: string): Record<string, unknown> {
  if (tool === "AskUserQuestion") {
    return {
      questions: [
        {
          question: "Which colour should the button be?",
          header: "Colour",
          multiSelect: false,
          options: [
            { label: "Blue", description: "A calm blue" },
            { label: "Green", description: "A bright green" },
          ],
        },
      ],
    };
  }
  if (tool === "request_user_input") {
    return {
      questions: [
        {
          id: "colour",
          header: "Colour",
          question: "Which colour should the button be?",
          options: [
            { label: "Blue", description: "A calm blue" },
            { label: "Green", description: "A bright green" },
          ],
        },
      ],
    };
  }
  return {
    questions: [
      {
        question: "Which colour should the button be?",
        header: "Colour",
        options: [
          { label: "Blue", description: "A calm blue" },
          { label: "Green", description: "A bright green" },
        ],
      },
    ],
  };
}

/**
 * The script for one request. `attempt` counts earlier requests with the same newest user text
 * (the server keeps it), so a capacity limit can lift after a few tries.
 */
export function choosePlan(conversation: Conversation, attempt: number): Plan {
  const latest = conversation.userTexts.at(-1) ?? "";
  const lower = latest.toLowerCase();
  if (conversation.endsWithToolResult) {
    const text = `Tool finished. Result: ${conversation.toolResult.replace(/\s+/g, " ").trim().slice(0, 400)}`;
    return { kind: "text", text, chunkDelayMs: 10, usage: usageFor(conversation, text) };
  }
  // Only the subagent's own conversation, whose one user text is this prompt: the parent's follow-up
  // turn after the subagent ends carries more texts and gets an ordinary reply.
  if (latest === FAILING_SUBAGENT_PROMPT && conversation.userTexts.length === 1) {
    return { kind: "error", status: 400, message: "Scripted subagent failure", shouldRetry: false };
  }
  if (lower.includes("unauthorized model")) return { kind: "error", status: 401, message: "Invalid API key (scripted).", shouldRetry: false };
  // A request the model refuses outright: no harness retries a 400, so the turn fails at once.
  if (lower.includes("this will fail")) return { kind: "error", status: 400, message: "Scripted model failure", shouldRetry: false };
  // A server error every harness retries in its own way (Codex "Reconnecting... n/N", OpenCode "retry n").
  if (lower.includes("server error")) return { kind: "error", status: 500, message: "Scripted server error", shouldRetry: true };
  const capacity = /capacity limit(?: x(\d+))?/.exec(lower);
  if (capacity && attempt < Number(capacity[1] ?? 2)) {
    return {
      kind: "error",
      status: 429,
      message: "Rate limit reached (scripted capacity limit).",
      retryAfterS: CAPACITY_RETRY_AFTER_S,
      shouldRetry: !lower.includes("no retry"),
    };
  }
  if (lower.includes("usage limit")) return { kind: "error", status: 429, message: "Usage limit reached (scripted).", retryAfterS: 3600, shouldRetry: false };
  const pick = (kind: ToolKind) => (conversation.toolResults === 0 ? conversation.tools.find((tool) => tool.kind === kind) : undefined);
  if (lower.includes("run the approval command") || lower.includes("run the shell command")) {
    const tool = pick("shell");
    if (tool) {
      const command = `echo ${SHELL_MARKER} && printf '${WRITTEN_TEXT.replace(/\n/g, "\\n")}' > ${WRITTEN_FILE}`;
      return { kind: "tool", tool: tool.name, toolKind: "shell", input: shellInput(tool.name, command), usage: usageFor(conversation, command) };
    }
  }
  if (lower.includes("ask me a question")) {
    const tool = pick("question");
    if (tool) return { kind: "tool", tool: tool.name, toolKind: "question", input: questionInput(tool.name), usage: usageFor(conversation, "question") };
  }
  const delegate = /delegate to a (failing |lingering )?subagent/.exec(lower);
  if (delegate) {
    const tool = pick("subagent");
    if (tool) {
      const how = delegate[1]?.trim();
      const input = {
        description: how === "failing" ? "Scripted failing subtask" : "Scripted subtask",
        prompt: how === "failing" ? FAILING_SUBAGENT_PROMPT : how === "lingering" ? SLOW_SUBAGENT_PROMPT : SUBAGENT_PROMPT,
        subagent_type: "general-purpose",
      };
      return { kind: "tool", tool: tool.name, toolKind: "subagent", input, usage: usageFor(conversation, "subagent") };
    }
  }
  if (lower.includes("endless"))
    return { kind: "text", text: words(ENDLESS_WORDS), chunkDelayMs: SLOW_CHUNK_MS, usage: usageFor(conversation, words(ENDLESS_WORDS)) };
  if (lower.includes("slow"))
    return {
      kind: "text",
      text: words(SLOW_WORDS),
      chunkDelayMs: SLOW_CHUNK_MS,
      usage: usageFor(conversation, words(SLOW_WORDS)),
      // Held only when asked ("held"): other suites let a slow reply end by itself.
      ...(lower.includes("held") && { holdAtChunk: SLOW_HOLD_AT_WORD }),
    };
  // A message sent to a running turn is answered by name, so the transcript shows which request took it.
  const text = lower.startsWith("steer:") ? `Received: ${latest}` : PLAIN_REPLY;
  return { kind: "text", text, chunkDelayMs: 10, usage: usageFor(conversation, text) };
}
