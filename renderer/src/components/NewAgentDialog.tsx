// The "New agent" form (issue 42): machine, project (or a new one on that machine) harness and model
// as that machine's T3 lists them (what cannot be chosen says why), access, an optional parent, a
// title and the first message (NewAgentFields.tsx).
// Native controls only, so it is used with the keyboard alone; Ctrl+Enter creates, Esc closes.
import { useEffect, useMemo, useRef, useState } from "react";
import { INPUT_LIMITS } from "../../../shared/bridge/contract";
import {
  CREATE_RUNTIME_MODES,
  type CreateRuntimeMode,
  type NewProject,
  RUNTIME_MODE_WORDS,
  checkCreate,
  machineUnavailable,
} from "../../../shared/fleet/creation";
import { splitKey } from "../../../shared/fleet/model";
import { dispatch } from "../state/dispatch";
import { clockTime } from "../state/format";
import { remembered, useNewAgent } from "../state/new-agent";
import { useFleet } from "../state/store";
import { FirstMessage, NewProjectFields } from "./NewAgentFields";

/** The project list's value for "New project…": not an id T3 gives a project (it makes UUIDs). */
const NEW_PROJECT = "+new-project";

export function NewAgentDialog() {
  const { choices, loading, error, parentKey } = useNewAgent();
  const first = useRef<HTMLSelectElement>(null);
  useEffect(() => first.current?.focus(), []);
  const environments = useFleet((s) => s.environments);
  // Why a machine cannot be chosen, from its live state (one back online while the form is open can be
  // chosen again), with its last-seen time in this window's clock (the service words it in ISO).
  const machines = (choices?.machines ?? []).map((entry) => {
    const env = environments.get(entry.environmentId);
    return env ? { ...entry, unavailable: machineUnavailable(env, true, (iso) => clockTime(Date.parse(iso))) } : entry;
  });
  const environmentId = choices?.optionsFor ?? "";
  return (
    <div className="dialog-backdrop">
      <div className="dialog new-agent" role="dialog" aria-modal="true" aria-labelledby="new-agent-title" data-testid="new-agent-dialog">
        <h2 id="new-agent-title">{parentKey ? "New child of this agent" : "New agent"}</h2>
        <label>
          Machine
          <select
            ref={first}
            data-testid="new-agent-machine"
            value={environmentId}
            aria-describedby="new-agent-machine-note"
            onChange={(event) => dispatch("new-agent.choose-machine", "button", { environmentId: event.target.value })}
          >
            {environmentId === "" ? <option value="">Choose a machine</option> : null}
            {machines.map((entry) => (
              <option key={entry.environmentId} value={entry.environmentId} disabled={entry.unavailable !== null}>
                {entry.unavailable ? `${entry.label} — ${entry.unavailable}` : entry.label}
              </option>
            ))}
          </select>
        </label>
        <p className="hint" id="new-agent-machine-note" data-testid="new-agent-machine-note">
          {loading
            ? "Asking the machine what it offers…"
            : (choices?.optionsError ??
              machines
                .filter((entry) => entry.unavailable)
                .map((entry) => entry.unavailable)
                .join(" "))}
        </p>
        {/* Keyed by what was read, so each machine's lists start from the choices remembered for it. */}
        <LaunchFields key={`${environmentId}:${choices?.options ? "options" : "none"}`} parentKey={parentKey} />
        {error ? (
          <p className="error" role="alert" data-testid="new-agent-refusal">
            {error}
          </p>
        ) : null}
      </div>
    </div>
  );
}

/** Everything after the machine: its projects, harnesses and models as its T3 listed them, and the message. */
function LaunchFields({ parentKey }: { parentKey: string | null }) {
  const { choices, loading, submitting } = useNewAgent();
  const environmentId = choices?.optionsFor ?? "";
  const options = choices?.options ?? null;
  const machine = choices?.machines.find((candidate) => candidate.environmentId === environmentId);
  const [initial] = useState(() => {
    const memory = remembered(environmentId || null);
    const usable = options?.providers.filter((provider) => provider.unavailable === null) ?? [];
    const provider = usable.find((entry) => entry.instanceId === memory.instanceId) ?? usable[0];
    return {
      projectId: (options?.projects.find((entry) => entry.id === memory.projectId) ?? options?.projects[0])?.id ?? "",
      instanceId: provider?.instanceId ?? "",
      model: provider?.models.find((entry) => entry.slug === memory.model)?.slug ?? provider?.models[0]?.slug ?? "",
      runtimeMode: memory.runtimeMode ?? ("approval-required" as CreateRuntimeMode),
    };
  });
  const [projectQuery, setProjectQuery] = useState("");
  const [projectId, setProjectId] = useState(initial.projectId);
  const [newProject, setNewProject] = useState<NewProject>({ title: "", workspaceRoot: "", createIfMissing: false });
  const creatingProject = projectId === NEW_PROJECT;
  const [instanceId, setInstanceId] = useState(initial.instanceId);
  const [model, setModel] = useState(initial.model);
  const [runtimeMode, setRuntimeMode] = useState<CreateRuntimeMode>(initial.runtimeMode);
  const [parentThreadId, setParent] = useState<string>(parentKey && splitKey(parentKey)[0] === environmentId ? splitKey(parentKey)[1] : "");
  const [title, setTitle] = useState("");
  const [text, setText] = useState("");
  const [attempted, setAttempted] = useState(false);

  const projects = useMemo(() => {
    const needle = projectQuery.trim().toLowerCase();
    return (options?.projects ?? []).filter((project) => !needle || `${project.title} ${project.workspaceRoot ?? ""}`.toLowerCase().includes(needle));
  }, [options, projectQuery]);
  const provider = options?.providers.find((entry) => entry.instanceId === instanceId);
  const form = {
    environmentId,
    projectId: creatingProject ? "" : projectId,
    newProject: creatingProject ? newProject : null,
    instanceId,
    model,
    runtimeMode,
    parentThreadId: parentThreadId || null,
    title,
    text,
  };
  const problem =
    machine && options
      ? checkCreate(form, machine, options)
      : (choices?.optionsError ?? (loading ? "Still asking the machine what it offers." : "No paired machine can take a new agent now: each says why above."));
  const tooLong = text.length > INPUT_LIMITS.messageText;

  const submit = () => {
    setAttempted(true);
    if (problem || tooLong || !options) return;
    dispatch("new-agent.create", "button", { form });
  };

  return (
    <form
      className="dialog-form"
      aria-label="The new agent"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
      onKeyDown={(event) => {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          submit();
        }
      }}
    >
      <label>
        Find a project
        <input
          type="search"
          data-testid="new-agent-project-search"
          value={projectQuery}
          onChange={(event) => {
            setProjectQuery(event.target.value);
            if (creatingProject) return;
            // The project chosen is always one the list shows.
            const needle = event.target.value.trim().toLowerCase();
            const match = (options?.projects ?? []).find((project) => `${project.title} ${project.workspaceRoot ?? ""}`.toLowerCase().includes(needle));
            setProjectId(match?.id ?? "");
          }}
        />
      </label>
      <label>
        Project
        <select
          data-testid="new-agent-project"
          value={projectId}
          aria-describedby="new-agent-project-note"
          onChange={(event) => setProjectId(event.target.value)}
        >
          {projects.length === 0 ? <option value="">No project matches</option> : null}
          {projects.map((project) => (
            <option key={project.id} value={project.id}>
              {project.workspaceRoot ? `${project.title} — ${project.workspaceRoot}` : project.title}
            </option>
          ))}
          {/* Offered where this machine's T3 takes a project from this client; else the note says why not. */}
          {options && options.projectCreation === null ? <option value={NEW_PROJECT}>New project…</option> : null}
        </select>
      </label>
      <p className="hint" id="new-agent-project-note" data-testid="new-agent-project-note">
        {options?.projectCreation ?? (options && !creatingProject ? "Or New project…: a folder on that machine, which T3 adds as a project." : null)}
      </p>
      {creatingProject ? <NewProjectFields value={newProject} onChange={setNewProject} machine={machine?.label ?? "that machine"} /> : null}
      <div className="new-agent-row">
        <label>
          Harness
          <select
            data-testid="new-agent-harness"
            value={instanceId}
            onChange={(event) => {
              setInstanceId(event.target.value);
              setModel(options?.providers.find((entry) => entry.instanceId === event.target.value)?.models[0]?.slug ?? "");
            }}
          >
            {(options?.providers ?? []).map((entry) => (
              <option key={entry.instanceId} value={entry.instanceId} disabled={entry.unavailable !== null}>
                {entry.unavailable ? `${entry.name} — ${entry.unavailable}` : entry.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <select data-testid="new-agent-model" value={model} onChange={(event) => setModel(event.target.value)}>
            {(provider?.models ?? []).map((entry) => (
              <option key={entry.slug} value={entry.slug}>
                {entry.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <fieldset className="new-agent-access">
        <legend>Access</legend>
        {CREATE_RUNTIME_MODES.map((mode) => (
          <label key={mode} className="check">
            <input type="radio" name="new-agent-access" value={mode} checked={runtimeMode === mode} onChange={() => setRuntimeMode(mode)} />
            {RUNTIME_MODE_WORDS[mode]}
          </label>
        ))}
      </fieldset>
      <label>
        Parent (optional)
        <select data-testid="new-agent-parent" value={parentThreadId} onChange={(event) => setParent(event.target.value)}>
          <option value="">None: a new agent of its own</option>
          {(machine?.parents ?? []).map((parent) => (
            <option key={parent.threadId} value={parent.threadId}>
              {parent.title}
            </option>
          ))}
        </select>
      </label>
      <label>
        Title (optional)
        <input
          data-testid="new-agent-title-input"
          value={title}
          maxLength={INPUT_LIMITS.label}
          placeholder="From the first line of the message"
          onChange={(event) => setTitle(event.target.value)}
        />
      </label>
      <FirstMessage text={text} onChange={setText} />
      <p className="error" role="alert" data-testid="new-agent-error">
        {attempted ? (tooLong ? `The message is too long to send: the limit is ${INPUT_LIMITS.messageText.toLocaleString("en")} characters.` : problem) : null}
      </p>
      <div className="dialog-actions">
        <button type="button" data-testid="new-agent-cancel" onClick={() => dispatch("new-agent.close", "button")}>
          Cancel
        </button>
        <button type="submit" className="primary" data-testid="new-agent-create" disabled={submitting || loading}>
          {submitting ? "Creating…" : "Create and send"}
        </button>
      </div>
    </form>
  );
}
