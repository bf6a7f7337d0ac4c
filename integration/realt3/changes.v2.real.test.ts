// Changes and usage against T3's V2 engine (protocol 2, issue 24): the real Codex, pointed at the
// scripted model server, runs a shell command that writes a file in a git workspace; the fleet shows
// the run's files as the engine's checkpoint lists them, its diff matches `git diff` of the
// workspace, and its usage is what the engine's provider turns report (this engine predates token
// figures: "not reported"). With T3_RECORD_CHANGES=1 it records what the engine sent into
// fixtures/t3-v2dev-changes/. Inside scripts/realt3.sh's network namespace.
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentDiff } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import { onlyLoopback } from "../harnesses/offline.testkit";
import { ScriptedModelServer } from "../model/scripted-model-server";
import { FAST, type Fleet, agent, keyOf, startFleet, until } from "./fleet.testkit";
import { RealT3Server, V2_ENGINE } from "./harness.testkit";
import { T3V2Operator } from "./operator-v2.testkit";

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const TURN_MS = 180_000;

let model: ScriptedModelServer;
let server: RealT3Server;
let operator: T3V2Operator;
let fleet: Fleet;
let projectId: string;
const cleanups: (() => unknown)[] = [];
const workspace = () => join(server.workDir, "changes-codex");

beforeAll(async () => {
  if (!(await onlyLoopback())) throw new Error("run the real-server suites inside scripts/realt3.sh's network namespace (loopback only)");
  model = await ScriptedModelServer.start();
  server = await RealT3Server.start({ kind: V2_ENGINE, harnesses: { names: ["codex"], modelUrl: model.url } });
  operator = await T3V2Operator.start(server);
  // A git repository with one commit, made before the project: the engine checkpoints it per run.
  const git = (...args: string[]) => run("git", ["-c", "user.email=fleet@example.invalid", "-c", "user.name=fleet", ...args], { cwd: workspace() });
  await mkdir(workspace(), { recursive: true });
  await git("init", "-q");
  await writeFile(join(workspace(), "README.md"), "# changes\n");
  await git("add", "README.md");
  await git("commit", "-q", "-m", "start");
  projectId = await operator.createProject("changes-codex");
  fleet = await startFleet(server, FAST, cleanups);
}, 180_000);

afterAll(async () => {
  operator?.close();
  while (cleanups.length) await cleanups.pop()!();
  await server?.stop();
  await model?.close();
}, 60_000);

/** `git diff` of the workspace against its commit, untracked files included. */
async function workspaceDiff(): Promise<string> {
  await run("git", ["add", "-N", "."], { cwd: workspace() });
  return (await run("git", ["diff", "HEAD"], { cwd: workspace() })).stdout;
}

const changedLines = (diff: string) => diff.split("\n").filter((line) => (line.startsWith("+") || line.startsWith("-")) && !/^(\+\+\+|---) /.test(line));

describe("changes and usage under T3's V2 engine", () => {
  it("a run that writes a file: its files, a diff matching git diff, usage as the engine reports it", async () => {
    const threadId = await operator.createThread(projectId, "Write a file", "full-access");
    await until(fleet, () => agent(fleet, threadId) !== undefined, "the agent in the fleet");
    const key = keyOf(fleet, threadId);
    const delivery = (await fleet.service.request("agent.send", {
      key,
      text: "run the approval command [changes-v2]",
      expectedIntent: "new-turn",
    })) as Delivery;
    await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "answered", "answered", TURN_MS);
    await until(
      fleet,
      () => (agent(fleet, threadId)?.changes?.length ?? 0) > 0,
      () => `the run's checkpoint (shown: ${JSON.stringify(agent(fleet, threadId)?.changes)})`,
      TURN_MS,
    );

    const projection = (await operator.projection(threadId)) as unknown as {
      checkpoints: { appRunOrdinal: number | null; status: string; files: unknown[] }[];
      providerTurns: { tokenUsage?: { usedTokens: number; maxTokens?: number | null } }[];
    };
    const checkpoint = projection.checkpoints.filter((entry) => entry.appRunOrdinal !== null).at(-1)!;
    const turn = agent(fleet, threadId)!.changes!.at(-1)!;
    expect(turn.status).toBe(checkpoint.status);
    expect(turn.files).toEqual(checkpoint.files);

    const workspaceChanges = changedLines(await workspaceDiff());
    if (turn.status === "ready") {
      const diff = (await fleet.service.request("agent.diff", { key, scope: { kind: "turn", turnCount: turn.turnCount } })) as AgentDiff;
      expect(diff.state).toBe("ready");
      expect(changedLines(diff.state === "ready" ? diff.text : "")).toEqual(workspaceChanges);
      if (process.env.T3_RECORD_CHANGES === "1") {
        const folder = join(root, "fixtures/t3-v2dev-changes");
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, "projection-with-checkpoint.json"), JSON.stringify(projection, null, 2) + "\n");
        await writeFile(
          join(folder, "turn-diff.json"),
          JSON.stringify(
            { request: { threadId, fromTurnCount: turn.turnCount - 1, toTurnCount: turn.turnCount }, diff: diff.state === "ready" ? diff.text : null },
            null,
            2,
          ) + "\n",
        );
      }
    }

    // Usage: the newest provider turn's live figures, or not reported where the engine gives none.
    const live = projection.providerTurns.flatMap((entry) => (entry.tokenUsage ? [entry.tokenUsage] : [])).at(-1);
    const usage = agent(fleet, threadId)!.usage;
    if (!live) expect(usage).toBeUndefined();
    else expect(usage).toMatchObject({ contextUsed: live.usedTokens, contextMax: live.maxTokens ?? null });
  }, 300_000);
});
