// The transcript: messages as markdown with the agent's tool activity inline (commands with their
// exit status, file changes with counts, approvals, questions and their answers, subagents).
import type { AgentDetail } from "../../../shared/bridge/contract";
import type { ThreadActivity, ThreadMessage } from "../../../shared/t3/schemas";
import { relativeTime } from "../state/format";
import { Folded, Markdown } from "./Markdown";

type Entry = { at: string; message: ThreadMessage } | { at: string; activity: ThreadActivity };

type Payload = Record<string, unknown>;

function payloadOf(activity: ThreadActivity): Payload {
  return activity.payload && typeof activity.payload === "object" ? (activity.payload as Payload) : {};
}

/** The provider's item inside a tool payload (`data.item`), where T3 forwards it. */
function itemOf(payload: Payload): Payload {
  const data = payload.data && typeof payload.data === "object" ? (payload.data as Payload) : {};
  return data.item && typeof data.item === "object" ? (data.item as Payload) : {};
}

const str = (value: unknown): string | null => (typeof value === "string" && value ? value : null);
const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);

/** Messages longer than this fold as a whole (their code blocks fold sooner, on their own). */
const MESSAGE_FOLD_LINES = 120;

/** Activities that say nothing a person needs in the transcript. */
const QUIET = new Set(["context-window.updated", "task.progress"]);

export function timeline(detail: AgentDetail): Entry[] {
  // A started tool whose completion arrived is shown once, as completed.
  const completed = new Set(
    detail.activities.filter((a) => a.kind === "tool.completed").map((a) => str(payloadOf(a).toolCallId) ?? str(payloadOf(a).detail) ?? a.id),
  );
  const entries: Entry[] = detail.messages.map((message) => ({ at: message.createdAt, message }));
  for (const activity of detail.activities) {
    if (QUIET.has(activity.kind)) continue;
    const payload = payloadOf(activity);
    if (activity.kind === "tool.started" && completed.has(str(payload.toolCallId) ?? str(payload.detail) ?? "")) continue;
    entries.push({ at: activity.createdAt, activity });
  }
  return entries.sort((a, b) => a.at.localeCompare(b.at));
}

function questionsOf(detail: AgentDetail, requestId: unknown): Map<string, string> {
  const requested = detail.activities.find((a) => a.kind === "user-input.requested" && payloadOf(a).requestId === requestId);
  const questions = requested ? payloadOf(requested).questions : undefined;
  const map = new Map<string, string>();
  if (Array.isArray(questions)) for (const q of questions as Payload[]) if (str(q.id)) map.set(String(q.id), str(q.question) ?? String(q.id));
  return map;
}

function answerText(value: unknown): string {
  if (Array.isArray(value)) return value.map(answerText).join(", ");
  if (value && typeof value === "object") {
    const answers = (value as Payload).answers;
    return answers !== undefined ? answerText(answers) : JSON.stringify(value);
  }
  return String(value ?? "");
}

function ActivityLine({ activity, detail, now }: { activity: ThreadActivity; detail: AgentDetail; now: number }) {
  const payload = payloadOf(activity);
  const item = itemOf(payload);
  const time = <span className="time">{relativeTime(activity.createdAt, now)}</span>;
  const itemType = str(payload.itemType) ?? str(item.type);
  if (activity.kind.startsWith("tool.") && (itemType === "command_execution" || itemType === "commandExecution")) {
    const commandLine = str(payload.detail) ?? str(item.command) ?? str(payload.input) ?? activity.summary;
    const exitCode = num(payload.exitCode) ?? num(item.exitCode);
    const status = str(payload.status) ?? (activity.kind === "tool.started" ? "running" : "completed");
    const failed = status === "failed" || status === "declined" || (exitCode !== null && exitCode !== 0);
    const output = str(item.aggregatedOutput) ?? str(payload.output);
    return (
      <div className={`activity activity-command ${failed ? "tone-error" : ""}`} data-testid="activity-command" data-status={status}>
        <code className="command-line">$ {commandLine}</code>{" "}
        <span className="command-status">
          {status}
          {exitCode !== null ? ` · exit ${exitCode}` : ""}
        </span>{" "}
        {time}
        {output ? (
          <Folded lines={output.split("\n").length} what="output">
            <pre className="command-output">{output}</pre>
          </Folded>
        ) : null}
      </div>
    );
  }
  if (activity.kind.startsWith("tool.") && (itemType === "file_change" || itemType === "fileChange")) {
    const changes = Array.isArray(item.changes) ? (item.changes as Payload[]) : [];
    const files = changes.length || (str(payload.fileName) ? 1 : 0);
    const additions = num(payload.additions) ?? changes.reduce((sum, change) => sum + (num(change.additions) ?? 0), 0);
    const deletions = num(payload.deletions) ?? changes.reduce((sum, change) => sum + (num(change.deletions) ?? 0), 0);
    const names = changes.map((change) => str(change.path)).filter(Boolean).join(", ") || str(payload.fileName) || str(payload.detail) || "";
    return (
      <div className="activity activity-files" data-testid="activity-files">
        <span>
          {files} file{files === 1 ? "" : "s"} changed <span className="additions">+{additions}</span> <span className="deletions">−{deletions}</span>
        </span>{" "}
        <span className="clipped" title={names}>
          {names}
        </span>{" "}
        {time}
      </div>
    );
  }
  if (activity.kind === "approval.requested") {
    return (
      <div className="activity tone-approval" data-testid="activity-approval">
        Approval asked: <code>{str(payload.detail) ?? activity.summary}</code> {time}
      </div>
    );
  }
  if (activity.kind === "approval.resolved") {
    return (
      <div className="activity" data-testid="activity-approval-resolved">
        Approval answered: <strong>{str(payload.decision) ?? "answered"}</strong> {time}
      </div>
    );
  }
  if (activity.kind === "user-input.requested") {
    const questions = Array.isArray(payload.questions) ? (payload.questions as Payload[]) : [];
    return (
      <div className="activity tone-approval" data-testid="activity-question">
        Asked: {questions.map((q) => str(q.question)).filter(Boolean).join(" · ") || activity.summary} {time}
      </div>
    );
  }
  if (activity.kind === "user-input.resolved") {
    const questions = questionsOf(detail, payload.requestId);
    const answers = payload.answers && typeof payload.answers === "object" ? Object.entries(payload.answers as Payload) : [];
    return (
      <div className="activity activity-answer" data-testid="activity-answer">
        Answered:{" "}
        {answers.map(([id, value]) => (
          <span key={id} className="answer">
            {questions.get(id) ?? id} → <strong>{answerText(value)}</strong>{" "}
          </span>
        ))}
        {time}
      </div>
    );
  }
  if (activity.kind.startsWith("task.")) {
    return (
      <div className="activity" data-testid="activity-task">
        Subagent {str(payload.taskId) ?? ""}: {str(payload.detail) ?? activity.summary} {time}
      </div>
    );
  }
  const extra = str(payload.message) ?? str(payload.detail);
  return (
    <div className={`activity tone-${activity.tone}`} data-testid="activity">
      {activity.summary}
      {extra ? `: ${extra}` : ""} {time}
    </div>
  );
}

export function Transcript({ detail, offline, now }: { detail: AgentDetail | undefined; offline: boolean; now: number }) {
  if (!detail?.loaded) {
    const text = detail?.error ?? (offline ? "This machine is not online; the transcript shows once it answers again." : "Loading the transcript…");
    return (
      <div className="transcript" data-testid="transcript">
        {text}
      </div>
    );
  }
  return (
    <div className="transcript" data-testid="transcript" aria-live="polite">
      {timeline(detail).map((entry) =>
        "message" in entry ? (
          <article key={entry.message.id} className={`message message-${entry.message.role}`} data-testid={`message-${entry.message.role}`} data-turn={entry.message.turnId ?? ""}>
            <header>
              {entry.message.role}
              {entry.message.streaming ? <span className="streaming"> · streaming</span> : null}
            </header>
            <Folded lines={entry.message.text.split("\n").length} what="message" limit={MESSAGE_FOLD_LINES}>
              <Markdown text={entry.message.text} />
            </Folded>
          </article>
        ) : (
          <ActivityLine key={entry.activity.id} activity={entry.activity} detail={detail} now={now} />
        ),
      )}
    </div>
  );
}
