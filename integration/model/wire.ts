// The three model APIs the harnesses speak, each both ways: the request body reduced to the
// conversation the script reads (script.ts), and a plan streamed back as that API streams it
// (server-sent events, event names and field shapes as the public APIs document them).
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Conversation, type OfferedTool, type Plan, toolKind } from "./script";

export type Api = "openai-responses" | "anthropic-messages" | "openai-chat";

/** One server-sent event; `event` is omitted where the API sends only `data:` lines. */
export interface SseEvent {
  event?: string;
  data: unknown;
  /** Pause before this event, to stream slowly. */
  delayMs?: number;
  /** Wait before this event until the test releases the stream (a held slow reply). */
  hold?: boolean;
}

/** Harness wrappers that are not the user's own words: Codex's context blocks, Claude's reminders. */
const WRAPPER =
  /^\s*<(environment_context|user_instructions|system-reminder|permissions instructions|turn_aborted|user_shell_command)\b|^\s*# AGENTS\.md instructions/i;
/** The user's words inside a Claude reminder that carries a message sent while a turn ran. */
const REMINDER_MESSAGE = /<system-reminder>[\s\S]*?(?:sent the following message|user sent)[^:]*:\s*([\s\S]*?)\s*(?:Please address|<\/system-reminder>)/i;

function userTextsOf(texts: string[]): string[] {
  const found: string[] = [];
  for (const text of texts) {
    const reminded = REMINDER_MESSAGE.exec(text);
    if (reminded?.[1]) found.push(reminded[1].trim());
    else if (!WRAPPER.test(text) && text.trim()) found.push(text.trim());
  }
  return found;
}

const loose = z.looseObject({});
const textPart = z.looseObject({ type: z.string(), text: z.string().optional() });

// --- OpenAI Responses (Codex) ---

const ResponsesRequest = z.looseObject({
  model: z.string().optional(),
  input: z.array(loose).default([]),
  tools: z.array(z.looseObject({ type: z.string().optional(), name: z.string().optional() })).default([]),
  stream: z.boolean().optional(),
});

function responsesConversation(body: unknown): Conversation {
  const request = ResponsesRequest.parse(body);
  const texts: string[] = [];
  let endsWithToolResult = false;
  let toolResult = "";
  let toolResults = 0;
  for (const item of request.input) {
    const type = String(item.type ?? "message");
    if (type === "message" && item.role === "user") {
      const content = z.array(textPart).catch([]).parse(item.content);
      texts.push(...content.flatMap((part) => (part.text ? [part.text] : [])));
      endsWithToolResult = false;
    } else if (type === "function_call_output" || type === "custom_tool_call_output" || type === "local_shell_call_output") {
      endsWithToolResult = true;
      toolResults += 1;
      toolResult = typeof item.output === "string" ? item.output : JSON.stringify(item.output);
    } else if (type === "message" && item.role === "assistant") {
      endsWithToolResult = false;
    }
  }
  const tools: OfferedTool[] = request.tools.flatMap((tool) =>
    tool.name ? [{ name: tool.name, kind: toolKind(tool.name) }] : tool.type === "local_shell" ? [{ name: "local_shell", kind: "shell" as const }] : [],
  );
  return { userTexts: userTextsOf(texts), endsWithToolResult, toolResult, toolResults, tools };
}

function responsesStream(plan: Exclude<Plan, { kind: "error" }>, model: string): SseEvent[] {
  const responseId = `resp_${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id: responseId, object: "response", created_at: created, model, status: "in_progress", output: [] as unknown[] };
  const usage = {
    input_tokens: plan.usage.inputTokens,
    input_tokens_details: { cached_tokens: plan.usage.cachedInputTokens },
    output_tokens: plan.usage.outputTokens,
    output_tokens_details: { reasoning_tokens: plan.usage.reasoningTokens },
    total_tokens: plan.usage.inputTokens + plan.usage.outputTokens,
  };
  const events: SseEvent[] = [{ event: "response.created", data: { type: "response.created", response: base } }];
  let item: Record<string, unknown>;
  if (plan.kind === "text") {
    const itemId = `msg_${randomUUID()}`;
    events.push({
      event: "response.output_item.added",
      data: {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: itemId, type: "message", status: "in_progress", role: "assistant", content: [] },
      },
    });
    events.push({
      event: "response.content_part.added",
      data: {
        type: "response.content_part.added",
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      },
    });
    for (const [index, delta] of chunks(plan.text).entries()) {
      events.push({
        event: "response.output_text.delta",
        delayMs: plan.chunkDelayMs,
        hold: index === plan.holdAtChunk,
        data: { type: "response.output_text.delta", item_id: itemId, output_index: 0, content_index: 0, delta },
      });
    }
    events.push({
      event: "response.output_text.done",
      data: { type: "response.output_text.done", item_id: itemId, output_index: 0, content_index: 0, text: plan.text },
    });
    item = { id: itemId, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: plan.text, annotations: [] }] };
  } else {
    const itemId = `fc_${randomUUID()}`;
    const args = JSON.stringify(plan.input);
    item = { id: itemId, type: "function_call", status: "completed", call_id: `call_${randomUUID()}`, name: plan.tool, arguments: args };
    events.push({
      event: "response.output_item.added",
      data: { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", arguments: "" } },
    });
    events.push({
      event: "response.function_call_arguments.delta",
      data: { type: "response.function_call_arguments.delta", item_id: itemId, output_index: 0, delta: args },
    });
    events.push({
      event: "response.function_call_arguments.done",
      data: { type: "response.function_call_arguments.done", item_id: itemId, output_index: 0, arguments: args },
    });
  }
  events.push({ event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item } });
  events.push({ event: "response.completed", data: { type: "response.completed", response: { ...base, status: "completed", output: [item], usage } } });
  return events;
}

// --- Anthropic Messages (Claude Code) ---

const AnthropicRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(loose)]) })).default([]),
  tools: z.array(z.looseObject({ name: z.string().optional() })).default([]),
  stream: z.boolean().optional(),
});

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  return z
    .array(textPart)
    .catch([])
    .parse(content)
    .flatMap((part) => (part.text ? [part.text] : []))
    .join("\n");
}

function anthropicConversation(body: unknown): Conversation {
  const request = AnthropicRequest.parse(body);
  const texts: string[] = [];
  let endsWithToolResult = false;
  let toolResult = "";
  let toolResults = 0;
  for (const message of request.messages) {
    if (message.role !== "user") {
      endsWithToolResult = false;
      continue;
    }
    const parts = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    endsWithToolResult = false;
    for (const part of parts) {
      if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
      if (part.type === "tool_result") {
        endsWithToolResult = true;
        toolResults += 1;
        toolResult = contentText(part.content);
      }
    }
  }
  const tools = request.tools.flatMap((tool) => (tool.name ? [{ name: tool.name, kind: toolKind(tool.name) }] : []));
  return { userTexts: userTextsOf(texts), endsWithToolResult, toolResult, toolResults, tools };
}

function anthropicMessage(plan: Exclude<Plan, { kind: "error" }>, model: string) {
  const content =
    plan.kind === "text"
      ? [{ type: "text", text: plan.text }]
      : [{ type: "tool_use", id: `toolu_${randomUUID().replace(/-/g, "")}`, name: plan.tool, input: plan.input }];
  return {
    id: `msg_${randomUUID().replace(/-/g, "")}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: plan.kind === "text" ? "end_turn" : "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: plan.usage.inputTokens,
      output_tokens: plan.usage.outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: plan.usage.cachedInputTokens,
    },
  };
}

function anthropicStream(plan: Exclude<Plan, { kind: "error" }>, model: string): SseEvent[] {
  const message = anthropicMessage(plan, model);
  const events: SseEvent[] = [
    {
      event: "message_start",
      data: { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } },
    },
  ];
  if (plan.kind === "text") {
    events.push({ event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } });
    events.push({ event: "ping", data: { type: "ping" } });
    for (const [index, text] of chunks(plan.text).entries())
      events.push({
        event: "content_block_delta",
        delayMs: plan.chunkDelayMs,
        hold: index === plan.holdAtChunk,
        data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
      });
  } else {
    const block = message.content[0] as { id: string; name: string };
    events.push({
      event: "content_block_start",
      data: { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } },
    });
    events.push({
      event: "content_block_delta",
      data: { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(plan.input) } },
    });
  }
  events.push({ event: "content_block_stop", data: { type: "content_block_stop", index: 0 } });
  events.push({
    event: "message_delta",
    data: { type: "message_delta", delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: plan.usage.outputTokens } },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  return events;
}

// --- OpenAI chat completions (OpenCode's OpenAI-compatible provider) ---

const ChatRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional() })).default([]),
  tools: z.array(z.looseObject({ function: z.looseObject({ name: z.string() }).optional() })).default([]),
  stream: z.boolean().optional(),
});

function chatConversation(body: unknown): Conversation {
  const request = ChatRequest.parse(body);
  const texts: string[] = [];
  let endsWithToolResult = false;
  let toolResult = "";
  let toolResults = 0;
  for (const message of request.messages) {
    if (message.role === "user") {
      texts.push(contentText(message.content));
      endsWithToolResult = false;
    } else if (message.role === "tool") {
      endsWithToolResult = true;
      toolResults += 1;
      toolResult = contentText(message.content);
    } else if (message.role === "assistant") {
      endsWithToolResult = false;
    }
  }
  const tools = request.tools.flatMap((tool) => (tool.function ? [{ name: tool.function.name, kind: toolKind(tool.function.name) }] : []));
  return { userTexts: userTextsOf(texts), endsWithToolResult, toolResult, toolResults, tools };
}

function chatStream(plan: Exclude<Plan, { kind: "error" }>, model: string): SseEvent[] {
  const id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null, delayMs?: number, hold?: boolean): SseEvent => ({
    delayMs,
    hold,
    data: { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] },
  });
  const events: SseEvent[] = [chunk({ role: "assistant", content: "" }, null)];
  if (plan.kind === "text") {
    for (const [index, content] of chunks(plan.text).entries()) events.push(chunk({ content }, null, plan.chunkDelayMs, index === plan.holdAtChunk));
    events.push(chunk({}, "stop"));
  } else {
    events.push(
      chunk(
        { tool_calls: [{ index: 0, id: `call_${randomUUID()}`, type: "function", function: { name: plan.tool, arguments: JSON.stringify(plan.input) } }] },
        null,
      ),
    );
    events.push(chunk({}, "tool_calls"));
  }
  const usage = {
    prompt_tokens: plan.usage.inputTokens,
    completion_tokens: plan.usage.outputTokens,
    total_tokens: plan.usage.inputTokens + plan.usage.outputTokens,
    prompt_tokens_details: { cached_tokens: plan.usage.cachedInputTokens },
    completion_tokens_details: { reasoning_tokens: plan.usage.reasoningTokens },
  };
  events.push({ data: { id, object: "chat.completion.chunk", created, model, choices: [], usage } });
  events.push({ data: "[DONE]" });
  return events;
}

function chatCompletion(plan: Exclude<Plan, { kind: "error" }>, model: string) {
  const message =
    plan.kind === "text"
      ? { role: "assistant", content: plan.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: [{ id: `call_${randomUUID()}`, type: "function", function: { name: plan.tool, arguments: JSON.stringify(plan.input) } }],
        };
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: plan.kind === "text" ? "stop" : "tool_calls" }],
    usage: {
      prompt_tokens: plan.usage.inputTokens,
      completion_tokens: plan.usage.outputTokens,
      total_tokens: plan.usage.inputTokens + plan.usage.outputTokens,
    },
  };
}

/** Words with their trailing space: the pieces a reply streams in. */
function chunks(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [text];
}

export const conversationOf: Record<Api, (body: unknown) => Conversation> = {
  "openai-responses": responsesConversation,
  "anthropic-messages": anthropicConversation,
  "openai-chat": chatConversation,
};

export const streamOf: Record<Api, (plan: Exclude<Plan, { kind: "error" }>, model: string) => SseEvent[]> = {
  "openai-responses": responsesStream,
  "anthropic-messages": anthropicStream,
  "openai-chat": chatStream,
};

/** The non-streamed answer, for a request with `stream: false` (Claude Code asks some that way). */
export function wholeOf(api: Api, plan: Exclude<Plan, { kind: "error" }>, model: string): unknown {
  if (api === "anthropic-messages") return anthropicMessage(plan, model);
  if (api === "openai-chat") return chatCompletion(plan, model);
  const events = responsesStream(plan, model);
  return (events.at(-1)!.data as { response: unknown }).response;
}

/** The API's own error body for a scripted failure. */
export function errorBody(api: Api, plan: Extract<Plan, { kind: "error" }>): unknown {
  if (api === "anthropic-messages") {
    const type =
      plan.status === 401 ? "authentication_error" : plan.status === 429 ? "rate_limit_error" : plan.status === 400 ? "invalid_request_error" : "api_error";
    return { type: "error", error: { type, message: plan.message } };
  }
  const type =
    plan.status === 401 ? "invalid_api_key" : plan.status === 429 ? "rate_limit_exceeded" : plan.status === 400 ? "invalid_request_error" : "server_error";
  return { error: { message: plan.message, type, code: type, param: null } };
}

export const wantsStream = (body: unknown): boolean => z.looseObject({ stream: z.boolean().optional() }).catch({}).parse(body).stream === true;
export const modelOf = (body: unknown): string => z.looseObject({ model: z.string().optional() }).catch({}).parse(body).model ?? "scripted-model";
