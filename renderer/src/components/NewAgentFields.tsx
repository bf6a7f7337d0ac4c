// Two parts of the "New agent" form (issue 42), kept apart from the form's choices: a new project's
// name and folder on the chosen machine, and the first message, written or previewed as the
// transcript shows markdown (Markdown.tsx), with the composer's limit and counter (Composer.tsx).
import { useState } from "react";
import { FOLDER_MAX_CHARS, type NewProject, PROJECT_FOLDER_WORDS } from "../../../shared/fleet/creation";
import { INPUT_LIMITS } from "../../../shared/bridge/contract";
import { MESSAGE_MAX_CHARS, limitWords } from "./Composer";
import { Markdown } from "./Markdown";

/** The new project's name, its folder on that machine, and whether T3 creates the folder. */
export function NewProjectFields({ value, onChange, machine }: { value: NewProject; onChange(next: NewProject): void; machine: string }) {
  return (
    <fieldset className="new-agent-project" data-testid="new-agent-new-project">
      <legend>New project on {machine}</legend>
      <label>
        Name
        <input
          data-testid="new-project-title"
          value={value.title}
          maxLength={INPUT_LIMITS.label}
          onChange={(event) => onChange({ ...value, title: event.target.value })}
        />
      </label>
      <label>
        Folder on {machine}
        <input
          data-testid="new-project-folder"
          value={value.workspaceRoot}
          maxLength={FOLDER_MAX_CHARS}
          placeholder="/home/you/project"
          spellCheck={false}
          aria-describedby="new-project-folder-note"
          onChange={(event) => onChange({ ...value, workspaceRoot: event.target.value })}
        />
      </label>
      <label className="check">
        <input
          type="checkbox"
          data-testid="new-project-create-folder"
          checked={value.createIfMissing}
          onChange={(event) => onChange({ ...value, createIfMissing: event.target.checked })}
        />
        T3 creates the folder if it is missing
      </label>
      <p className="hint" id="new-project-folder-note">
        {PROJECT_FOLDER_WORDS}
      </p>
    </fieldset>
  );
}

/** The first message: Write (a text area) or Preview (its markdown as the agent view will show it). */
export function FirstMessage({ text, onChange }: { text: string; onChange(next: string): void }) {
  const [preview, setPreview] = useState(false);
  const tooLong = text.length > MESSAGE_MAX_CHARS;
  return (
    <div className="new-agent-message">
      <div className="new-agent-message-head">
        <span id="new-agent-message-label">First message</span>
        <div className="segmented" role="radiogroup" aria-label="Write or preview the first message">
          <button type="button" role="radio" aria-checked={!preview} data-testid="new-agent-write" onClick={() => setPreview(false)}>
            Write
          </button>
          <button type="button" role="radio" aria-checked={preview} data-testid="new-agent-preview" onClick={() => setPreview(true)}>
            Preview
          </button>
        </div>
      </div>
      {preview ? (
        <div className="new-agent-preview" data-testid="new-agent-message-preview" aria-labelledby="new-agent-message-label" role="region">
          {text.trim() ? <Markdown text={text} /> : <p className="hint">Nothing written yet.</p>}
        </div>
      ) : (
        <textarea
          data-testid="new-agent-message"
          aria-labelledby="new-agent-message-label"
          value={text}
          rows={5}
          aria-invalid={tooLong}
          aria-describedby="new-agent-counter"
          onChange={(event) => onChange(event.target.value)}
        />
      )}
      <span id="new-agent-counter" className={`counter ${tooLong ? "counter-over" : ""}`} data-testid="new-agent-counter">
        {text.length.toLocaleString("en")} / {MESSAGE_MAX_CHARS.toLocaleString("en")}
        {tooLong ? " — too long to send" : " · Markdown; Ctrl+Enter creates"}
      </span>
      {/* Announced once near the limit and once past it, as the composer does. */}
      <span className="sr-only" aria-live="polite">
        {limitWords(text.length)}
      </span>
    </div>
  );
}
