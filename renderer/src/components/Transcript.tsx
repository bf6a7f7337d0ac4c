// The transcript: messages as markdown with the agent's activity inline, in order — commands with
// their exit status, file changes with counts, approvals, questions and their answers, errors.
// Cost per update is independent of the history: entries are memoized, only the entries in view are
// mounted (virtualized like the fleet tree), a reply streaming at the end is rendered after them (a
// token renders, lays out and measures that reply alone), and relative times tick on their own
// (RelativeTime), not through the transcript.
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, type ReactNode, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { AgentDetail } from "../../../shared/bridge/contract";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import { Folded, Markdown } from "./Markdown";
import { StreamingMarkdown } from "./StreamingMarkdown";
import { StreamingReply } from "./StreamingReply";
import { MessageQueueMarker } from "./MessageQueueMarker";
import { RelativeTime } from "./RelativeTime";

/** Messages longer than this fold as a whole (their code blocks fold sooner, on their own). */
const MESSAGE_FOLD_LINES = 120;

/** Activity that says nothing a person needs in the transcript. */
const QUIET = new Set(["context-window.updated", "task.progress"]);

type FileChange = Extract<TranscriptItem, { type: "file-change" }>;
type Entry = TranscriptItem | { type: "file-changes"; id: string; createdAt: string; changes: FileChange[] };

/** What stands first when the fleet holds only the thread's newest items (shared/fleet/transcript-tail.ts). */
export const EARLIER_IN_T3 = "Earlier messages are in T3: T3 Fleet holds this thread's newest items.";

/** The line that says the transcript starts after older items the fleet does not hold; `at`: when the first item it holds was made. */
export function earlierNote(at: string): TranscriptItem {
  return { type: "activity", id: "earlier-in-t3", kind: "earlier-in-t3", summary: EARLIER_IN_T3, tone: "info", runId: null, createdAt: at, updatedAt: at };
}

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

/** Entries render the same when their items are the same objects (the store replaces only changed items). */
export function sameEntry(a: Entry, b: Entry): boolean {
  if (a === b) return true;
  if (a.type !== "file-changes" || b.type !== "file-changes") return false;
  return a.changes.length === b.changes.length && a.changes.every((change, index) => change === b.changes[index]);
}

/**
 * Whether a command the transcript shows as running is the one an approval card asks about: it has
 * not started, it waits for the user, and must not read as running under that card.
 */
export function awaitsApproval(entry: Entry, approvalDetails: readonly string[]): boolean {
  if (entry.type !== "command" || (entry.status !== "running" && entry.status !== "pending")) return false;
  const command = entry.command.trim();
  return command !== "" && approvalDetails.some((detail) => detail.includes(command));
}

const EntryLine = memo(
  /** `agentKey`: the reply streaming at the end follows the agent's detail in the store on its own (StreamingReply.tsx). */
  function EntryLine({ entry, awaiting, agentKey }: { entry: Entry; awaiting: boolean; agentKey?: string }) {
    const time = <RelativeTime iso={entry.createdAt} />;
    switch (entry.type) {
      case "message":
        return (
          <article
            className={`message message-${entry.role}${entry.queue ? " message-held-back" : ""}`}
            data-testid={`message-${entry.role}`}
            data-turn={entry.runId ?? ""}
            data-queue={entry.queue?.state}
          >
            <header>
              {entry.role}
              {entry.streaming ? <span className="streaming"> · streaming</span> : null}
            </header>
            {entry.queue ? <MessageQueueMarker queue={entry.queue} /> : null}
            {entry.streaming && agentKey ? (
              <StreamingReply key={entry.id} agentKey={agentKey} id={entry.id} foldLines={MESSAGE_FOLD_LINES} />
            ) : (
              <Folded lines={entry.text.split("\n").length} what="message" limit={MESSAGE_FOLD_LINES}>
                {entry.streaming ? <StreamingMarkdown text={entry.text} /> : <Markdown text={entry.text} />}
              </Folded>
            )}
          </article>
        );
      case "command": {
        const failed = entry.status === "failed" || (entry.exitCode !== null && entry.exitCode !== 0);
        return (
          <div
            className={`activity activity-command ${failed ? "tone-error" : ""}`}
            data-testid="activity-command"
            data-status={awaiting ? "awaiting-approval" : entry.status}
          >
            <code className="command-line">$ {entry.command}</code>{" "}
            <span className="command-status">
              {awaiting ? "awaiting your approval" : entry.status}
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
  },
  (previous, next) => previous.awaiting === next.awaiting && previous.agentKey === next.agentKey && sameEntry(previous.entry, next.entry),
);

/** How close to the bottom (px) still counts as "reading the newest": new items then keep it in view. */
const FOLLOW_SLACK_PX = 48;
/** A first guess of an entry's height before it is measured. */
const ESTIMATED_ENTRY_PX = 72;

/**
 * A reply still streaming at the end of the transcript: it is rendered after the virtualized
 * entries, so a token renders that reply alone, measures nothing and moves no other entry.
 */
export function streamingTail(entries: Entry[]): { settled: Entry[]; tail: Entry | null } {
  const last = entries.at(-1);
  return last?.type === "message" && last.streaming ? { settled: entries.slice(0, -1), tail: last } : { settled: entries, tail: null };
}

/** The same entries as the last render's, as that array: a token that grows only the tail renders no list. */
function useSameEntries(entries: Entry[]): Entry[] {
  const [kept, setKept] = useState(entries);
  const same = kept === entries || (kept.length === entries.length && kept.every((entry, index) => sameEntry(entry, entries[index]!)));
  if (!same) setKept(entries);
  return same ? kept : entries;
}

/**
 * The settled entries: only those in view (and a few around) are mounted, each measured once it
 * renders. Renders again when they change or the view scrolls, not when the streaming tail grows.
 */
const VirtualEntries = memo(function VirtualEntries({
  entries,
  approvalDetails,
  scroller,
  resized,
}: {
  entries: Entry[];
  approvalDetails: readonly string[];
  /** The scrolling element, once it is mounted (the parent's; a ref would not be set yet when this mounts). */
  scroller: HTMLDivElement | null;
  /** Called once the entries' total height changed and is laid out. */
  resized: () => void;
}) {
  const virtualizer = useVirtualizer({
    count: entries.length,
    getScrollElement: () => scroller,
    estimateSize: () => ESTIMATED_ENTRY_PX,
    getItemKey: (index) => entries[index]!.id,
    overscan: 6,
  });
  const totalSize = virtualizer.getTotalSize();
  // After the virtualizer measured entries: it moves the view by what an entry above it grew, from
  // the offset it last saw scrolled, which may be older than the last keeping to the bottom.
  useLayoutEffect(resized, [entries, totalSize, resized]);
  const items = virtualizer.getVirtualItems();
  const spaceAbove = items[0]?.start ?? 0;
  const spaceBelow = items.length > 0 ? totalSize - items[items.length - 1]!.end : 0;
  return (
    <>
      <div style={{ height: spaceAbove }} aria-hidden="true" />
      {items.map((item) => (
        <div key={item.key} className="transcript-entry" data-index={item.index} ref={virtualizer.measureElement}>
          <EntryLine entry={entries[item.index]!} awaiting={awaitsApproval(entries[item.index]!, approvalDetails)} />
        </div>
      ))}
      <div style={{ height: Math.max(0, spaceBelow) }} aria-hidden="true" />
    </>
  );
});

/**
 * Opens at the newest entry and follows new items and a growing streaming reply while the reader is
 * at the bottom; once they scroll up to read, new items no longer move the view. Following is done
 * when the content's size changes (a ResizeObserver runs after the frame's layout), so keeping to
 * the bottom costs no layout of its own.
 */
function TranscriptEntries({
  agentKey,
  entries,
  approvalDetails,
  after,
}: {
  agentKey: string;
  entries: Entry[];
  approvalDetails: readonly string[];
  after?: ReactNode;
}) {
  // The element in a ref for what moves it, and in state for the entries, which need it once mounted.
  const ref = useRef<HTMLDivElement | null>(null);
  const [scroller, setScroller] = useState<HTMLDivElement | null>(null);
  const mounted = useCallback((element: HTMLDivElement | null) => {
    ref.current = element;
    setScroller(element);
  }, []);
  const content = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const split = streamingTail(entries);
  const settled = useSameEntries(split.settled);
  const keepToBottom = useCallback(() => {
    const element = ref.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, []);
  useEffect(() => {
    if (!scroller || !content.current) return;
    const observer = new ResizeObserver(keepToBottom);
    // The content grows, or the view shrinks (the panel above it unfolds, the window is resized).
    observer.observe(content.current);
    observer.observe(scroller);
    return () => observer.disconnect();
  }, [scroller, keepToBottom]);
  const onScroll = () => {
    const element = ref.current;
    if (element) following.current = element.scrollHeight - element.scrollTop - element.clientHeight <= FOLLOW_SLACK_PX;
  };
  return (
    // Not a live region: it would read the whole transcript again on every agent switch; new messages
    // are announced by NewMessageAnnouncer. Focusable, so the keyboard can scroll it.
    <div className="transcript" data-testid="transcript" role="region" aria-label="Transcript" tabIndex={0} ref={mounted} onScroll={onScroll}>
      <div className="transcript-content" ref={content}>
        <VirtualEntries entries={settled} approvalDetails={approvalDetails} scroller={scroller} resized={keepToBottom} />
        {split.tail ? (
          <div className="transcript-entry" data-testid="streaming-tail">
            <EntryLine entry={split.tail} awaiting={false} agentKey={agentKey} />
          </div>
        ) : null}
        {after}
      </div>
    </div>
  );
}

/** Longest part of a new message read out; the transcript holds the rest. */
const ANNOUNCED_CHARS = 200;

/**
 * What a screen reader hears of the transcript: each agent message that arrives while the agent is
 * open, once it is complete, and nothing for what was there when it opened (the transcript is keyed by
 * agent, AgentPanel.tsx, so a switch starts afresh). The region is rendered empty from the start,
 * so its first message is announced.
 */
export function newMessageWords(seen: Set<string>, items: readonly TranscriptItem[]): string | null {
  let words: string | null = null;
  for (const item of items) {
    // The user's own messages are not news to them (their receipts say what became of them).
    if (item.type !== "message" || item.role !== "assistant" || item.streaming || seen.has(item.id)) continue;
    seen.add(item.id);
    const text = item.text.length > ANNOUNCED_CHARS ? `${item.text.slice(0, ANNOUNCED_CHARS - 1)}…` : item.text;
    words = `The agent wrote: ${text}`;
  }
  return words;
}

function NewMessageAnnouncer({ items }: { items: readonly TranscriptItem[] | undefined }) {
  const seen = useRef<Set<string> | null>(null);
  const [words, setWords] = useState("");
  useEffect(() => {
    if (!items) return;
    if (seen.current === null) {
      // What the transcript held when it opened is not news.
      seen.current = new Set(items.flatMap((item) => (item.type === "message" && !item.streaming ? [item.id] : [])));
      return;
    }
    const next = newMessageWords(seen.current, items);
    if (next) setWords(next);
  }, [items]);
  return (
    <div className="sr-only" aria-live="polite" data-testid="transcript-announcer">
      {words}
    </div>
  );
}

/**
 * The open agent's transcript; renders again only when its detail, the machine's reachability or
 * what follows it changes. `after`: what follows the entries in the same scroll (the message
 * receipts, AgentPanel.tsx).
 */
export const Transcript = memo(function Transcript({
  detail,
  offline,
  awaitingApproval = "",
  after,
}: {
  detail: AgentDetail | undefined;
  offline: boolean;
  /** What the agent's pending approvals ask about, one per line (a string, so an unchanged value does not render again). */
  awaitingApproval?: string;
  after?: ReactNode;
}) {
  const items = detail?.loaded ? detail.items : undefined;
  const earlier = detail?.earlier === true;
  // The same note while the first item stays: a token then leaves every entry before the streaming reply as it was.
  const startsAt = earlier ? (items?.[0]?.createdAt ?? "") : null;
  const note = useMemo(() => (startsAt === null ? null : earlierNote(startsAt)), [startsAt]);
  const entries = useMemo(() => (items ? transcriptEntries(note ? [note, ...items] : items) : []), [items, note]);
  const approvalDetails = useMemo(() => (awaitingApproval ? awaitingApproval.split("\n") : []), [awaitingApproval]);
  if (!detail || !items) {
    const text = detail?.error ?? (offline ? "This machine is not online; the transcript shows once it answers again." : "Loading the transcript…");
    return (
      <>
        <NewMessageAnnouncer items={undefined} />
        <div className="transcript" data-testid="transcript" role="region" aria-label="Transcript" tabIndex={0}>
          {text}
          {after}
        </div>
      </>
    );
  }
  return (
    <>
      <NewMessageAnnouncer items={items} />
      <TranscriptEntries agentKey={detail.key} entries={entries} approvalDetails={approvalDetails} after={after} />
    </>
  );
});
