// The creates the fleet sends a protocol-2 T3 (issue 42), held against what T3's V2 engine took from
// its own client (../shared/fixtures/t3-v2dev/01-create-project-thread.json): the same method and
// the same fields for a new project (`projects.mutate`) and a new thread (`thread.create`), and the
// recorded answer to the project read as T3 sent it.
import { describe, expect, it } from "vitest";
import { T3Error } from "../../../../shared/t3/errors";
import { readV2Recording } from "../../../../sim/recordings";
import { recordedExit, shapeDifferences } from "../../../../sim/protocol2/recordings.testkit";
import { createProject, wireCommand } from "./wire-commands";

const recording = readV2Recording("01-create-project-thread.json");

/** The payload of the recording's first request with this tag. */
function recordedPayload(tag: string): Record<string, unknown> {
  const request = recording.frames.find((entry) => entry.dir === "out" && entry.frame?._tag === "Request" && entry.frame.tag === tag);
  return (request!.frame as unknown as { payload: Record<string, unknown> }).payload;
}

describe("protocol 2's creates, as T3's V2 engine took them", () => {
  it("a new project goes by projects.mutate with the recorded fields, and the recorded answer is read as T3's confirmation", async () => {
    const recorded = recordedPayload("projects.mutate");
    const answer = (recordedExit(recording, "projects.mutate") as { value: { id: string } }).value;
    const calls: { method: string; payload: Record<string, unknown> }[] = [];
    const socket = {
      call: (method: string, payload: unknown) => {
        calls.push({ method, payload: payload as Record<string, unknown> });
        return Promise.resolve(answer);
      },
    };
    const command = {
      type: "create-project",
      commandId: "cmd-1",
      projectId: answer.id,
      title: "api",
      workspaceRoot: "/srv/api",
      createIfMissing: true,
    } as const;
    expect(await createProject(socket, command)).toEqual({ sequence: 0 });
    expect(calls.map((call) => call.method)).toEqual(["projects.mutate"]);
    expect(shapeDifferences(calls[0]!.payload, recorded)).toEqual([]);
    expect(calls[0]!.payload).toEqual({
      type: "project.create",
      commandId: "cmd-1",
      projectId: answer.id,
      title: "api",
      workspaceRoot: "/srv/api",
      createWorkspaceRootIfMissing: true,
    });
    // An answer naming another project is not taken as this one's confirmation.
    const other = await createProject(socket, { ...command, projectId: "proj-other" }).catch((error: unknown) => error);
    expect(other).toBeInstanceOf(T3Error);
    expect((other as T3Error).message).toMatch(/another project's id/);
  });

  it("a new thread is the recorded thread.create, field for field", () => {
    const recorded = recordedPayload("orchestration.dispatchCommand");
    const wire = wireCommand(
      {
        type: "create-thread",
        commandId: "cmd-2",
        threadId: "thread-1",
        projectId: "proj-1",
        title: "plain",
        instanceId: "codex",
        model: "gpt-5-codex",
        runtimeMode: "full-access",
      },
      () => null,
    );
    expect(shapeDifferences(wire, recorded)).toEqual([]);
    expect(Object.keys(wire).sort()).toEqual(Object.keys(recorded).sort());
  });
});
