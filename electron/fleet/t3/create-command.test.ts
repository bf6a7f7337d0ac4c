// The fleet's "create a thread" command on the wire of each protocol (issue 42): on protocol 2 it has
// exactly the fields, and the constants, T3's own UI sent to the V2 engine
// (../shared/fixtures/t3-v2dev/01-create-project-thread.json), and decodes with T3's command schema
// read strictly. The harnesses and models a real T3 reported in `server.getConfig`, as the form
// offers them. Protocol 1's is decoded by the simulator with T3's client schema (creations.test.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ThreadCreateCommandV2 } from "../../../shared/t3/protocol2/commands";
import { launchProviders } from "../../../shared/t3/providers";
import { fixturesDir } from "../../../sim/recordings";
import type { AgentCommand } from "./adapter";
import { wireCommand } from "./protocol2/wire-commands";
import { readV2Recording } from "./protocol2/replay.testkit";

const create: AgentCommand = {
  type: "create-thread",
  commandId: "cmd-1",
  threadId: "sub.thread-parent.abc",
  projectId: "proj-1",
  title: "Fix the build",
  instanceId: "codex",
  model: "gpt-5-codex",
  runtimeMode: "approval-required",
};

describe("the create-thread command on the wire", () => {
  it("protocol 2: the fields and constants of the recorded thread.create, decoded by T3's schema read strictly", () => {
    const recorded = readV2Recording("01-create-project-thread.json").frames.find((entry) => {
      const payload = entry.frame?.payload as { type?: string } | undefined;
      return entry.dir === "out" && entry.frame?.tag === "orchestration.dispatchCommand" && payload?.type === "thread.create";
    })!.frame!.payload as Record<string, unknown>;
    const wire = wireCommand(create, () => null) as Record<string, unknown>;
    expect(Object.keys(wire).sort()).toEqual(Object.keys(recorded).sort());
    for (const key of ["type", "createdBy", "creationSource", "interactionMode", "branch", "worktreePath"]) expect(wire[key]).toEqual(recorded[key]);
    expect(Object.keys(wire.modelSelection as object).sort()).toEqual(Object.keys(recorded.modelSelection as object).sort());
    expect(z.strictObject(ThreadCreateCommandV2.shape).parse(wire)).toMatchObject({ threadId: "sub.thread-parent.abc", runtimeMode: "approval-required" });
  });

  it("takes the harnesses a real T3 reported, one it reports missing with T3's words, and only models it lists", () => {
    const recorded = JSON.parse(readFileSync(join(fixturesDir(), "t3-0.0.33", "ws-server-getConfig-result.json"), "utf8")) as {
      body: { exit: { value: unknown } };
    };
    const providers = launchProviders(recorded.body.exit.value);
    const claude = providers.find((provider) => provider.instanceId === "claudeAgent")!;
    expect(claude).toMatchObject({ name: "Claude", unavailable: "Claude Agent CLI (`claude`) is not installed or not on PATH." });
    expect(claude.models.map((model) => model.slug)).toContain("claude-opus-5");
    expect(launchProviders({ providers: [{ instanceId: "codex", enabled: false, models: [{ slug: "gpt-5" }] }, { nonsense: true }] })).toEqual([
      {
        instanceId: "codex",
        driver: "codex",
        name: "codex",
        status: "ready",
        models: [{ slug: "gpt-5", name: "gpt-5" }],
        unavailable: "Disabled in T3's settings.",
      },
    ]);
  });
});
