// Starting agents from the fleet (issue 42) on the released T3 0.0.42 with the real Codex and the
// real Claude Code, each answered by the scripted model (integration/model), inside
// scripts/realt3.sh's namespace: a new agent and a new child per harness, each created through
// T3's dispatch API, answered, and shown under the right parent; and a create sent to a T3 frozen
// (SIGSTOP) at that moment, which T3 has exactly once however the fleet learns of it; and a project
// created from the fleet (T3 makes its folder when asked, and refuses a missing one otherwise), which
// T3's snapshot holds once, with an agent started in it that replies. Every claim is read in T3's
// own store (T3Operator), not only in the fleet.
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CreateChoices, Creation, NewProject } from "../../shared/fleet/creation";
import { ScriptedModelServer } from "../model/scripted-model-server";
import { PLAIN_REPLY } from "../model/script";
import { FAST, type Fleet, agent, recoverServer, startFleet, until } from "./fleet.testkit";
import { RELEASED_T3, RealT3Server } from "./harness.testkit";
import { T3Operator } from "./operator.testkit";

const HARNESSES = [
  { name: "codex", instanceId: "codex" },
  { name: "claude", instanceId: "claudeAgent" },
] as const;
/** A real harness's first turn on a loaded two-core machine. */
const TURN_MS = 120_000;

let model: ScriptedModelServer;
let server: RealT3Server;
let operator: T3Operator;
let fleet: Fleet;
const projects = new Map<string, string>();
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  model = await ScriptedModelServer.start();
  server = await RealT3Server.start({ kind: RELEASED_T3, harnesses: { names: ["codex", "claude"], modelUrl: model.url } });
  operator = await T3Operator.start(server);
  for (const harness of HARNESSES) {
    await mkdir(join(server.workDir, `create-${harness.name}`), { recursive: true });
    projects.set(harness.name, await operator.createProject(`create-${harness.name}`));
  }
  fleet = await startFleet(server, FAST, cleanups);
}, 120_000);

afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
  await server?.stop();
  await model?.close();
}, 60_000);

/** What the form offers for this harness on the real T3: its first listed model, as a user would take it. */
async function firstModel(instanceId: string): Promise<string> {
  const choices = (await fleet.service.request("agent.createChoices", { environmentId: fleet.environmentId })) as CreateChoices;
  const provider = choices.options?.providers.find((entry) => entry.instanceId === instanceId);
  expect(provider?.unavailable ?? null, `${instanceId} as T3 0.0.42 reports it`).toBeNull();
  return provider!.models[0]!.slug;
}

async function settled(creationId: string, timeoutMs = TURN_MS): Promise<Creation> {
  await until(
    fleet,
    () => ["replied", "failed", "not-created"].includes(fleet.service.creation(creationId)?.state ?? ""),
    () => `creation ${creationId} settled (now ${fleet.service.creation(creationId)?.state}: ${fleet.service.creation(creationId)?.reason})`,
    timeoutMs,
  );
  return fleet.service.creation(creationId)!;
}

async function create(
  harness: (typeof HARNESSES)[number],
  creationId: string,
  text: string,
  parentThreadId: string | null = null,
  newProject: NewProject | null = null,
): Promise<Creation> {
  return (await fleet.service.request("agent.create", {
    creationId,
    environmentId: fleet.environmentId,
    projectId: newProject ? "" : projects.get(harness.name)!,
    newProject,
    instanceId: harness.instanceId,
    model: await firstModel(harness.instanceId),
    runtimeMode: "full-access",
    parentThreadId,
    title: "",
    text,
  })) as Creation;
}

/** The threads T3 stores with this id, and their user messages. */
async function stored(threadId: string): Promise<{ threads: number; userTexts: string[] }> {
  const threads = (await operator.shell()).threads.filter((thread) => thread.id === threadId).length;
  const userTexts = threads ? (await operator.thread(threadId)).messages.filter((message) => message.role === "user").map((message) => message.text) : [];
  return { threads, userTexts };
}

describe("starting agents from the fleet on T3 0.0.42 with the real harnesses", () => {
  for (const harness of HARNESSES) {
    it(
      `${harness.name}: a new agent and a new child, each answered, the child under its parent in T3 and in the fleet`,
      async () => {
        const parent = await create(harness, `${harness.name}-new`, `[${harness.name}:create] say hello`);
        const parentDone = await settled(parent.creationId);
        expect(parentDone.state, parentDone.reason ?? "").toBe("replied");
        expect(await stored(parent.threadId)).toEqual({ threads: 1, userTexts: [`[${harness.name}:create] say hello`] });
        const detail = (await fleet.service.request("agent.open", { key: parent.agentKey })) as { items: { type: string; role?: string; text?: string }[] };
        expect(detail.items.some((item) => item.type === "message" && item.role === "assistant" && item.text?.includes(PLAIN_REPLY))).toBe(true);

        const child = await create(harness, `${harness.name}-child`, `[${harness.name}:child] say hello`, parent.threadId);
        expect(child.threadId.startsWith(`sub.${parent.threadId}.`)).toBe(true);
        const childDone = await settled(child.creationId);
        expect(childDone.state, childDone.reason ?? "").toBe("replied");
        expect(await stored(child.threadId)).toEqual({ threads: 1, userTexts: [`[${harness.name}:child] say hello`] });
        await until(fleet, () => agent(fleet, child.threadId)?.parentThreadId === parent.threadId, "the child under its parent in the fleet");
      },
      2 * TURN_MS + 60_000,
    );
  }

  it(
    "a create sent while T3 is frozen is made once: the fleet checks it against T3 when it answers again and carries on",
    async () => {
      const harness = HARNESSES[0];
      const threadsBefore = (await operator.shell()).threads.length;
      let frozen = false;
      const freezeAtCreate = (event: { type: string; creation?: Creation }) => {
        // Frozen after the form's checks, before the create leaves: the answer to it cannot come.
        if (event.type === "creation" && event.creation?.creationId === "frozen" && event.creation.state === "creating" && !frozen) {
          frozen = true;
          server.freeze();
        }
      };
      fleet.service.on("event", freezeAtCreate);
      cleanups.push(() => fleet.service.off("event", freezeAtCreate));
      try {
        const creation = await create(harness, "frozen", "[codex:frozen] say hello");
        expect(frozen).toBe(true);
        // T3 did not answer: the fleet never sends it again on its own, it checks.
        expect(creation.state).toBe("checking");
      } finally {
        server.thaw();
      }
      let done = await settled("frozen");
      if (done.state === "not-created") {
        // T3 had not taken it: Try again sends the same command, which T3 can carry out once only.
        await fleet.service.request("creation.retry", { creationId: "frozen" });
        done = await settled("frozen");
      }
      expect(done.state, done.reason ?? "").toBe("replied");
      expect(await stored(done.threadId)).toEqual({ threads: 1, userTexts: ["[codex:frozen] say hello"] });
      expect((await operator.shell()).threads.length).toBe(threadsBefore + 1);
      await recoverServer(server);
    },
    3 * TURN_MS,
  );

  it(
    "a project created from the fleet is in T3's snapshot once, with the folder T3 made, and an agent started in it replies",
    async () => {
      const harness = HARNESSES[0];
      const folder = join(server.workDir, "fleet-made", "api");
      const creation = await create(harness, "in-new-project", "[codex:project] say hello", null, {
        title: "fleet made",
        workspaceRoot: folder,
        createIfMissing: true,
      });
      expect(creation.project).toMatchObject({ title: "fleet made", workspaceRoot: folder });
      const done = await settled("in-new-project");
      expect(done.state, done.reason ?? "").toBe("replied");
      const shell = await operator.shell();
      expect(shell.projects.filter((project) => project.id === done.projectId)).toEqual([
        expect.objectContaining({ title: "fleet made", workspaceRoot: folder }),
      ]);
      expect(shell.projects.filter((project) => project.workspaceRoot === folder && !project.deletedAt)).toHaveLength(1);
      expect((await stat(folder)).isDirectory(), "T3 made the folder (createWorkspaceRootIfMissing)").toBe(true);
      expect(shell.threads.filter((thread) => thread.id === done.threadId).map((thread) => thread.projectId)).toEqual([done.projectId]);
      expect(await stored(done.threadId)).toEqual({ threads: 1, userTexts: ["[codex:project] say hello"] });

      // Without "T3 creates the folder", a folder that is not there is refused by T3, in its words, and nothing is made.
      const missing = join(server.workDir, "not-there");
      await create(harness, "missing-folder", "[codex:project] never sent", null, { title: "not there", workspaceRoot: missing, createIfMissing: false });
      const refused = await settled("missing-folder");
      expect(refused.state).toBe("failed");
      expect(refused.reason).toContain(`Workspace root does not exist: ${missing}`);
      const after = await operator.shell();
      expect(after.projects.filter((project) => project.workspaceRoot === missing)).toEqual([]);
      expect(after.threads.filter((thread) => thread.id === refused.threadId)).toEqual([]);
    },
    TURN_MS + 60_000,
  );
});
