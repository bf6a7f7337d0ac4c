// The scripted model server as a harness sees it: each API's stream, tool calls chosen from the
// tools the harness offers, scripted failures with the API's own error bodies, and the request log.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CAPACITY_RETRY_AFTER_S, PLAIN_REPLY, SHELL_MARKER, SLOW_HOLD_AT_WORD, SLOW_WORDS } from "./script";
import { ScriptedModelServer } from "./scripted-model-server";

let model: ScriptedModelServer;
beforeEach(async () => {
  model = await ScriptedModelServer.start();
});
afterEach(() => model.close());

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${model.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** The stream's events as the API sent them: `event:` name (when given) and parsed `data:`. */
async function events(response: Response): Promise<{ event?: string; data: unknown }[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)![1]!;
      return { ...(event && { event }), data: data === "[DONE]" ? data : (JSON.parse(data) as unknown) };
    });
}

const responsesBody = (text: string, tools: string[] = []) => ({
  model: "scripted-model",
  stream: true,
  input: [
    { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text }] },
  ],
  tools: tools.map((name) => ({ type: "function", name })),
});

describe("the scripted model server", () => {
  it("streams a Responses API reply ending in response.completed with usage, and records the user's words without the harness's wrappers", async () => {
    const response = await post("/v1/responses", responsesBody("say hello"));
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const stream = await events(response);
    const names = stream.map((event) => event.event);
    expect(names[0]).toBe("response.created");
    expect(names.at(-1)).toBe("response.completed");
    const text = stream.flatMap((event) => (event.event === "response.output_text.delta" ? [(event.data as { delta: string }).delta] : [])).join("");
    expect(text).toBe(PLAIN_REPLY);
    const completed = stream.at(-1)!.data as { response: { usage: { input_tokens: number; output_tokens: number } } };
    expect(completed.response.usage.input_tokens).toBeGreaterThan(0);
    expect(completed.response.usage.output_tokens).toBeGreaterThan(0);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]).toMatchObject({ api: "openai-responses", answer: "text", conversation: { userTexts: ["say hello"], endsWithToolResult: false } });
  });

  it("calls the harness's own shell tool with that tool's argument shape, then answers its result", async () => {
    const call = await events(await post("/v1/responses", responsesBody("run the shell command", ["exec_command", "write_stdin"])));
    const done = call.find((event) => event.event === "response.output_item.done")!.data as {
      item: { type: string; name: string; arguments: string; call_id: string };
    };
    expect(done.item).toMatchObject({ type: "function_call", name: "exec_command" });
    expect(JSON.parse(done.item.arguments).cmd).toContain(`echo ${SHELL_MARKER}`);
    const body = responsesBody("run the shell command", ["exec_command"]);
    body.input.push({ type: "function_call_output", call_id: done.item.call_id, output: `${SHELL_MARKER}\n` } as never);
    const after = await events(await post("/v1/responses", body));
    const final = after.find((event) => event.event === "response.output_text.done")!.data as { text: string };
    expect(final.text).toContain(SHELL_MARKER);
    expect(model.requests[1]!.conversation).toMatchObject({ endsWithToolResult: true });
  });

  it("streams Anthropic Messages events, with a tool_use block for Claude's Bash tool", async () => {
    const stream = await events(
      await post("/v1/messages?beta=true", {
        model: "claude-x",
        stream: true,
        messages: [{ role: "user", content: [{ type: "text", text: "run the approval command" }] }],
        tools: [{ name: "Bash" }, { name: "Write" }],
      }),
    );
    expect(stream.map((event) => event.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(stream[1]!.data).toMatchObject({ content_block: { type: "tool_use", name: "Bash" } });
    expect(JSON.parse((stream[2]!.data as { delta: { partial_json: string } }).delta.partial_json).command).toContain(SHELL_MARKER);
    expect(stream[4]!.data).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: expect.any(Number) } });
  });

  it("answers a non-streamed Messages request whole", async () => {
    const response = await post("/v1/messages", { model: "claude-x", messages: [{ role: "user", content: "say hello" }] });
    expect(await response.json()).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: PLAIN_REPLY }],
      stop_reason: "end_turn",
    });
  });

  it("streams chat completions chunks with usage and [DONE]", async () => {
    const stream = await events(await post("/v1/chat/completions", { model: "m", stream: true, messages: [{ role: "user", content: "say hello" }] }));
    expect(stream.at(-1)!.data).toBe("[DONE]");
    const text = stream
      .flatMap((event) => ((event.data as { choices?: { delta: { content?: string } }[] }).choices ?? []).map((choice) => choice.delta.content ?? ""))
      .join("");
    expect(text).toBe(PLAIN_REPLY);
    expect(stream.at(-2)!.data).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) } });
  });

  it("fails as scripted: 400, 500, 401, and a 429 with retry-after that lifts after the given number of tries", async () => {
    const failed = await post("/v1/responses", responsesBody("this will fail"));
    expect(failed.status).toBe(400);
    expect(failed.headers.get("x-should-retry")).toBe("false");
    expect(await failed.json()).toMatchObject({ error: { message: "Scripted model failure", type: "invalid_request_error" } });
    expect((await post("/v1/responses", responsesBody("a server error"))).status).toBe(500);
    const unauthorized = await post("/v1/messages", { stream: true, messages: [{ role: "user", content: "unauthorized model" }] });
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    const limited = () => post("/v1/messages", { stream: true, messages: [{ role: "user", content: "hit the capacity limit x2" }] });
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await limited();
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toBe(String(CAPACITY_RETRY_AFTER_S));
      expect(response.headers.get("x-should-retry")).toBe("true");
      expect(await response.json()).toMatchObject({ error: { type: "rate_limit_error" } });
    }
    expect((await limited()).status).toBe(200);
  });

  it("reads a message Claude delivered inside a system reminder as the user's words", async () => {
    const reminder =
      "<system-reminder>\nThe user sent the following message:\nsteer: and one more thing\n\nPlease address this message and continue with your tasks.\n</system-reminder>";
    await (
      await post("/v1/messages", {
        stream: true,
        messages: [
          { role: "user", content: "tell a story" },
          { role: "assistant", content: "once" },
          { role: "user", content: [{ type: "text", text: reminder }] },
        ],
      })
    ).text();
    expect(model.requests[0]!.conversation!.userTexts).toEqual(["tell a story", "steer: and one more thing"]);
  });

  it("records a stream the client closed early, and waits for requests by event", async () => {
    const seen = model.waitFor((request) => request.api === "openai-chat", "a chat request");
    const controller = new AbortController();
    const response = await fetch(`${model.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ stream: true, messages: [{ role: "user", content: "an endless story" }] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    const request = await seen;
    controller.abort();
    expect(await model.streamEnded(request)).toBe("aborted");
    expect(request).toMatchObject({ answer: "text", aborted: true });
    expect(model.modelRequestsContaining("an endless story")).toHaveLength(1);
  });
  it("holds a slow reply halfway until the test releases it, then streams the rest; a client that closes it is recorded as aborting", async () => {
    const reader = (await post("/v1/responses", responsesBody("tell a slow held story"))).body!.getReader();
    const slow = await model.waitFor((request) => request.text.includes("slow held story"), "the slow request");
    const decoder = new TextDecoder();
    let seen = "";
    const deltas = () => (seen.match(/event: response\.output_text\.delta/g) ?? []).length;
    while (deltas() < SLOW_HOLD_AT_WORD) seen += decoder.decode((await reader.read()).value, { stream: true });
    expect(deltas()).toBe(SLOW_HOLD_AT_WORD);
    let ended = false;
    void model.streamEnded(slow).then(() => (ended = true));
    model.release(slow);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += decoder.decode(chunk.value, { stream: true });
    expect(deltas()).toBe(SLOW_WORDS);
    expect(await model.streamEnded(slow)).toBe("completed");
    expect(ended).toBe(true);

    // Not asked to hold: the slow reply streams whole by itself.
    const whole = await events(await post("/v1/responses", responsesBody("tell a slow story")));
    expect(whole.filter((event) => event.event === "response.output_text.delta")).toHaveLength(SLOW_WORDS);

    const held = await post("/v1/responses", responsesBody("another slow held story"));
    const second = await model.waitFor((request) => request.text.includes("another slow held story"), "the second slow request");
    await held.body!.cancel();
    expect(await model.streamEnded(second)).toBe("aborted");
  });
});
