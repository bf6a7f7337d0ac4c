// The transcript: messages as markdown with the agent's activity inline, in order — commands with
// their exit status, file changes with counts, approvals, questions and their answers, errors.
import { type ReactNode, useLayoutEffect, useRef } from "react";
import type { AgentDetail } from "../../../shared/bridge/contract";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import { relativeTime } from "../state/format";
import { Folded, Markdown } from "./Markdown";

/** Messages longer than this fold as a whole (their code blocks fold sooner, on their own). */
const MESSAGE_FOLD_LINES = 120;

/** Activity that says nothing a person needs in the transcript. */
const QUIET = new Set(["context-window.updated", "task.progress"]);

type FileChange = Extract<TranscriptItem, { type: "file-change" }>;
type Entry = TranscriptItem | { type: "file-changes"; id: string; createdAt: string; changes: FileChange[] };

/** File changes of one run that follow each other read as one line with counts. */
export function transcriptEntries(items: TranscriptItem[]): Entry[] {
  const entries: Entry[] = [];
  for (const item of items) {
    if (item.type === "activity" && QUIET.has(item.kind)) continue;
    if (item.type === "file-change") {
      const last = entries.at(-1);
      if (last?.type === "file-changes" && last.changes[0]!.runId === item.runId) {
        last.changes.push(item);
        continue;
      }
      entries.push({ type: "file-changes", id: item.id, createdAt: item.createdAt, changes: [item] });
      continue;
    }
    entries.push(item);
  }
  return entries;
}

function EntryLine({ entry, now }: { entry: Entry; now: number }) {
  const time = <span className="time">{relativeTime(entry.createdAt, now)}</span>;
  switch (entry.type) {
    case "message":
      return (
        <article className={`message message-${entry.role}`} data-testid={`message-${entry.role}`} data-turn={entry.runId ?? ""}>
          <header>
            {entry.role}
            {entry.streaming ? <span className="streaming"> · streaming</span> : null}
          </header>
          <Folded lines={entry.text.split("\n").length} what="message" limit={MESSAGE_FOLD_LINES}>
            <Markdown text={entry.text} />
          </Folded>
        </article>
      );
    case "command": {
      const failed = entry.status === "failed" || (entry.exitCode !== null && entry.exitCode !== 0);
      return (
        <div className={`activity activity-command ${failed ? "tone-error" : ""}`} data-testid="activity-command" data-status={entry.status}>
          <code className="command-line">$ {entry.command}</code>{" "}
          <span className="command-status">
            {entry.status}
            {entry.exitCode !== null ? ` · exit ${entry.exitCode}` : ""}
          </span>{" "}
          {time}
        </div>
      );
    }
    case "file-changes": {
      const additions = entry.changes.reduce((sum, change) => sum + (change.additions ?? 0), 0);
      const deletions = entry.changes.reduce((sum, change) => sum + (change.deletions ?? 0), 0);
      const counted = entry.changes.some((change) => change.additions !== null || change.deletions !== null);
      const names = entry.changes.map((change) => change.path).join(", ");
      return (
        <div className="activity activity-files" data-testid="activity-files">
          {entry.changes.length} file{entry.changes.length === 1 ? "" : "s"} changed{" "}
          {counted ? (
            <>
              <span className="additions">+{additions}</span> <span className="deletions">−{deletions}</span>{" "}
            </>
          ) : null}
          <span className="clipped" title={names}>
            {names}
          </span>{" "}
          {time}
        </div>
      );
    }
    case "error":
      return (
        <div className="activity tone-error" data-testid="activity-error">
          {entry.message} {time}
        </div>
      );
    case "activity": {
      const testId = entry.kind === "user-input.resolved" ? "activity-answer" : entry.kind === "user-input.requested" ? "activity-question" : "activity";
      return (
        <div className={`activity tone-${entry.tone}`} data-testid={testId} data-kind={entry.kind}>
          {entry.summary} {time}
        </div>
      );
    }
  }
}

/** How close to the bottom (px) still counts as "reading the newest": new items then keep it in view. */
const FOLLOW_SLACK_PX = 48;

/**
 * Opens at the newest message and follows new items while the reader is at the bottom; once they
 * scroll up to read, new items no longer move the view.
 */
function useFollowNewest(items: readonly unknown[] | undefined) {
  const ref = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const element = ref.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, [items]);
  const onScroll = () => {
    const element = ref.current;
    if (element) following.current = element.scrollHeight - element.scrollTop - element.clientHeight <= FOLLOW_SLACK_PX;
  };
  return { ref, onScroll };
}

/** `after`: what follows the transcript in the same scroll (the message receipts, AgentPanel.tsx). */
export function Transcript({ detail, offline, now, after }: { detail: AgentDetail | undefined; offline: boolean; now: number; after?: ReactNode }) {
  const follow = useFollowNewest(detail?.loaded ? detail.items : undefined);
  if (!detail?.loaded) {
    const text = detail?.error ?? (offline ? "This machine is not online; the transcript shows once it answers again." : "Loading the transcript…");
    return (
      <div className="transcript" data-testid="transcript">
        {text}
        {after}
      </div>
    );
  }
  return (
    <div className="transcript" data-testid="transcript" aria-live="polite" ref={follow.ref} onScroll={follow.onScroll}>
      {transcriptEntries(detail.items).map((entry) => (
        <EntryLine key={entry.id} entry={entry} now={now} />
      ))}
      {after}
    </div>
  );
}
