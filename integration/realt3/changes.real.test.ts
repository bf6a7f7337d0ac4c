// Changes and usage against the released T3 0.0.42 (issue 24): the real Claude Code, pointed at the
// scripted model server (integration/model), runs a shell command that writes a file in a git
// workspace; the fleet shows the turn's files as T3's checkpoint lists them, its diff matches `git
// diff` of the workspace, and its usage is T3's context-window figures. With T3_RECORD_CHANGES=1
// it also records what T3 sent into fixtures/t3-0.0.42-changes/ (docs/t3-protocols.md, "Changes
// and usage"). Inside scripts/realt3.sh's network namespace.
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentDiff } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import { onlyLoopback } from "../harnesses/offline.testkit";
import { WRITTEN_FILE, WRITTEN_TEXT } from "../model/script";
import { ScriptedModelServer } from "../model/scripted-model-server";
import { FAST, type Fleet, agent, keyOf, startFleet, until } from "./fleet.testkit";
import { RELEASED_T3, RealT3Server } from "./harness.testkit";
import { T3Operator } from "./operator.testkit";

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const TURN_MS = 180_000;

let model: ScriptedModelServer;
let server: RealT3Server;
let operator: T3Operator;
let fleet: Fleet;
let projectId: string;
const cleanups: (() => unknown)[] = [];
const workspace = () => join(server.workDir, "changes-claude");

beforeAll(async () => {
  if (!(await onlyLoopback())) throw new Error("run the real-server suites inside scripts/realt3.sh's network namespace (loopback only)");
  model = await ScriptedModelServer.start();
  server = await RealT3Server.start({ kind: RELEASED_T3, harnesses: { names: ["claude"], modelUrl: model.url } });
  operator = await T3Operator.start(server);
  projectId = await operator.createProject("changes-claude");
  // A git repository with one commit: T3 checkpoints the workspace per turn.
  const git = (...args: string[]) => run("git", ["-c", "user.email=fleet@example.invalid", "-c", "user.name=fleet", ...args], { cwd: workspace() });
  await mkdir(workspace(), { recursive: true });
  await git("init", "-q");
  await writeFile(join(workspace(), "README.md"), "# changes\n");
  await git("add", "README.md");
  await git("commit", "-q", "-m", "start");
  fleet = await startFleet(server, FAST, cleanups);
}, 180_000);

afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
  await server?.stop();
  await model?.close();
}, 60_000);

/** `git diff` of the workspace against its commit, untracked files included (as T3's checkpoints include them). */
async function workspaceDiff(): Promise<string> {
  await run("git", ["add", "-N", "."], { cwd: workspace() });
  return (await run("git", ["diff", "HEAD"], { cwd: workspace() })).stdout;
}

const changedLines = (diff: string) => diff.split("\n").filter((line) => (line.startsWith("+") || line.startsWith("-")) && !/^(\+\+\+|---) /.test(line));

describe("changes and usage under T3 0.0.42", () => {
  it("a turn that writes a file: its files, a diff matching git diff, and T3's usage figures", async () => {
    const threadId = await operator.createThread(projectId, "Write a file", undefined, { instanceId: "claudeAgent", model: "claude-sonnet-4-5" });
    await until(fleet, () => agent(fleet, threadId) !== undefined, "the agent in the fleet");
    const key = keyOf(fleet, threadId);
    const delivery = (await fleet.service.request("agent.send", { key, text: "run the approval command [changes]", expectedIntent: "new-turn" })) as Delivery;
    await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "answered", "answered", TURN_MS);
    await until(
      fleet,
      () => (agent(fleet, threadId)?.changes?.length ?? 0) > 0,
      () => `the turn's checkpoint (shown: ${JSON.stringify(agent(fleet, threadId)?.changes)})`,
      TURN_MS,
    );

    // The files, as T3's checkpoint lists them.
    const stored = await operator.thread(threadId);
    const checkpoints = (stored as unknown as { checkpoints: { checkpointTurnCount: number; status: string; files: unknown[] }[] }).checkpoints;
    const turn = agent(fleet, threadId)!.changes!.at(-1)!;
    expect(turn.status).toBe("ready");
    expect(turn.files).toEqual(checkpoints.at(-1)!.files);
    expect(turn.files).toContainEqual(expect.objectContaining({ path: WRITTEN_FILE, additions: WRITTEN_TEXT.split("\n").length - 1, deletions: 0 }));

    // The diff matches the workspace's.
    const diff = (await fleet.service.request("agent.diff", { key, scope: { kind: "turn", turnCount: turn.turnCount } })) as AgentDiff;
    expect(diff.state).toBe("ready");
    const text = diff.state === "ready" ? diff.text : "";
    expect(changedLines(text)).toEqual(changedLines(await workspaceDiff()));

    // Usage is T3's newest context-window report.
    const report = stored.activities.filter((activity) => activity.kind === "context-window.updated").at(-1) as
      { payload: Record<string, number | boolean> } | undefined;
    const usage = agent(fleet, threadId)!.usage;
    if (!report) expect(usage).toBeUndefined();
    else {
      expect(usage?.contextUsed).toBe(report.payload.usedTokens ?? null);
      expect(usage?.contextMax).toBe(report.payload.maxTokens ?? null);
      expect(usage?.lastTurn?.input ?? null).toBe(report.payload.lastInputTokens ?? null);
      expect(usage?.thread?.total).toBe(report.payload.totalProcessedTokens ?? report.payload.usedTokens);
    }

    if (process.env.T3_RECORD_CHANGES === "1") {
      const folder = join(root, "fixtures/t3-0.0.42-changes");
      await mkdir(folder, { recursive: true });
      await writeFile(
        join(folder, "thread-with-checkpoint.json"),
        JSON.stringify({ kind: "snapshot", snapshot: { snapshotSequence: 0, thread: stored } }, null, 2) + "\n",
      );
      await writeFile(
        join(folder, "turn-diff.json"),
        JSON.stringify({ request: { threadId, fromTurnCount: turn.turnCount - 1, toTurnCount: turn.turnCount }, diff: text }, null, 2) + "\n",
      );
    }
  }, 300_000);
});
