// The "New agent" form's choices (issue 42): why a machine cannot be chosen, the title derived from
// the message, and the checks before sending (the harnesses T3 reports: electron/fleet/t3/create-command.test.ts).
import { describe, expect, it } from "vitest";
import {
  type CreateRequest,
  type LaunchOptions,
  type MachineChoice,
  checkCreate,
  checkNewProject,
  comparableFolder,
  machineUnavailable,
  newThreadId,
  titleFromMessage,
} from "./creation";
import type { EnvironmentView } from "./types";

const machine = (connection: EnvironmentView["connection"], readOnly = false) => ({ label: "build-box", readOnly, connection }) as EnvironmentView;

describe("the New agent form's choices", () => {
  it("says why a machine cannot be chosen: offline as of when, no permission to operate, not yet connected", () => {
    expect(machineUnavailable(machine({ phase: "online", since: "t" }), true)).toBeNull();
    expect(machineUnavailable(machine({ phase: "online", since: "t" }, true), true)).toBe(
      "The pairing with build-box is read-only: T3 gave no permission to operate.",
    );
    expect(machineUnavailable(machine({ phase: "online", since: "t" }), false)).toBe("build-box's T3 has no command to create threads.");
    const offline = { phase: "offline", since: "t", lastConfirmedAt: "2026-12-04T10:00:00.000Z", nextAttemptAt: "t", attempt: 2, error: "refused" } as const;
    expect(machineUnavailable(machine(offline), true)).toBe("build-box is offline, last seen 2026-12-04T10:00:00.000Z.");
    // The window words the time in its own clock.
    expect(machineUnavailable(machine(offline), true, () => "10:00")).toBe("build-box is offline, last seen 10:00.");
    expect(machineUnavailable(machine({ phase: "connecting", since: "t", lastConfirmedAt: null }), true)).toBe("build-box is still connecting.");
  });

  it("derives a title from the first line of the message, cut at a word; a child's id follows T3's child convention", () => {
    expect(titleFromMessage("  Fix the flaky test\nin ci  ")).toBe("Fix the flaky test");
    expect(titleFromMessage("word ".repeat(30))).toBe(`${"word ".repeat(12).trim()}…`);
    expect(newThreadId("thread-9", "abc")).toBe("sub.thread-9.abc");
    expect(newThreadId(null, "abc")).toBe("thread-abc");
  });

  it("checks a request against what the machine lists now", () => {
    const choice: MachineChoice = { environmentId: "e", label: "build-box", unavailable: null, parents: [{ threadId: "p", title: "Parent" }] };
    const options: LaunchOptions = {
      projects: [{ id: "proj", title: "repo", workspaceRoot: "/r" }],
      providers: [{ instanceId: "codex", driver: "codex", name: "Codex", status: "ready", models: [{ slug: "gpt-5", name: "GPT-5" }], unavailable: null }],
      projectCreation: null,
    };
    const ok: CreateRequest = {
      environmentId: "e",
      projectId: "proj",
      instanceId: "codex",
      model: "gpt-5",
      runtimeMode: "approval-required",
      parentThreadId: "p",
      title: "",
      text: "go",
    };
    expect(checkCreate(ok, choice, options)).toBeNull();
    expect(checkCreate({ ...ok, text: " " }, choice, options)).toMatch(/Write the first message/);
    expect(checkCreate(ok, undefined, options)).toBe("This machine is no longer paired.");
    expect(checkCreate({ ...ok, instanceId: "grok" }, choice, options)).toMatch(/no longer offered/);
    expect(checkCreate({ ...ok, parentThreadId: "gone" }, choice, options)).toMatch(/parent agent has ended/);
    expect(checkCreate({ ...ok, projectId: "" }, choice, options)).toBe("Choose a project, or New project….");

    // A new project replaces the listed one; where the machine's T3 cannot take one, its words.
    const fresh = { ...ok, projectId: "", newProject: { title: "api", workspaceRoot: "~/src/api", createIfMissing: true } };
    expect(checkCreate(fresh, choice, options)).toBeNull();
    expect(checkCreate(fresh, choice, { ...options, projectCreation: "No project.create here." })).toBe("No project.create here.");
    expect(checkCreate({ ...fresh, newProject: { ...fresh.newProject, title: " " } }, choice, options)).toBe("Name the new project.");
  });

  it("checks a new project's name and folder as T3 reads a path on its own machine", () => {
    const listed = [{ id: "proj", title: "repo", workspaceRoot: "/home/ana/repo" }];
    const check = (workspaceRoot: string, title = "api") => checkNewProject({ title, workspaceRoot, createIfMissing: false }, listed);
    for (const folder of ["/srv/api", "~", "~/api", "C:\\work\\api", "d:/api", "\\\\host\\share"]) expect(check(folder), folder).toBeNull();
    expect(check("")).toBe("Give the new project's folder on that machine.");
    expect(check("api")).toBe('The folder must be an absolute path on that machine (starting with / or ~), not "api".');
    expect(check("./api")).toMatch(/must be an absolute path/);
    expect(check("/srv/a\u0007pi")).toBe("The folder path has a control character in it.");
    expect(check(`/${"a".repeat(5000)}`)).toMatch(/longer than 4,096 characters/);
    // T3 refuses a second active project on one folder; the form says which project has it.
    expect(check("/home/ana/repo/")).toBe("repo already uses that folder on this machine: choose it instead.");
    expect(comparableFolder("C:/Work/")).toBe("c:\\work");
    expect(comparableFolder("/")).toBe("/");
  });
});
