// What the user did to agents (issue 25 point 2): every approval, answer, acknowledgement, snooze,
// stop and their undoing, named by agent and machine. The fleet service keeps the log
// (electron/fleet/handled-log.ts) so it survives a reload of the window; the window shows a brief
// confirmation of each and lists what was handled since local midnight. Pure.
import type { ApprovalDecision, PendingRequest } from "./facts";
import { idWords, plainText } from "./words";

export type HandledAction =
  /**
   * `detail`: the request's subject as the server gave it; `asked`: that text is the agent's question
   * in its own words (protocol 2's prompt), not the command itself; `requestKind`: command, file-change…
   */
  | { kind: "decided"; decision: ApprovalDecision; detail: string | null; requestKind?: string | null; asked?: boolean }
  | { kind: "answered" }
  | { kind: "acknowledged" }
  | { kind: "unacknowledged" }
  /** Marked the changes of its latest turn reviewed (shared/fleet/needs.ts awaitsReview), and the undo. */
  | { kind: "reviewed" }
  | { kind: "unreviewed" }
  /** `until`: when it wakes (ms since epoch); null: until what it needs changes. */
  | { kind: "snoozed"; until: number | null }
  | { kind: "unsnoozed" }
  | { kind: "stopped" };

/**
 * How many entries the "handled today" list keeps: a heavy day's worth (about 100 KB). Older ones of
 * the day are let go and counted, and the list says how many (electron/fleet/handled-log.ts).
 */
export const HANDLED_KEPT = 500;

/** What the list says of the day's entries it no longer keeps; null when it let none go. */
export function letGoWords(letGo: number): string | null {
  if (letGo <= 0) return null;
  const entries = letGo === 1 ? "1 earlier entry" : `${letGo.toLocaleString("en-US")} earlier entries`;
  return `${entries} of today not kept: the list keeps the newest ${HANDLED_KEPT.toLocaleString("en-US")}.`;
}

export interface HandledEntry {
  /** Unique within the log. */
  id: string;
  /** When the fleet carried it out (ms since epoch). */
  at: number;
  key: string;
  /** The agent's title and its machine's label when it was done (both may change later). */
  agent: string;
  machine: string;
  action: HandledAction;
}

/**
 * How much of a request's subject the log keeps: its first line, which is all a confirmation quotes
 * (DETAIL_LIMIT after Markdown is dropped), with room for code marks. A command can be a whole
 * heredoc, and the log holds up to its cap of entries all day (electron/fleet/handled-log.ts).
 */
const DETAIL_KEPT = 400;

const keptDetail = (detail: string | null | undefined): string | null => (detail ? (detail.split("\n", 1)[0] ?? "").slice(0, DETAIL_KEPT) : null);

/** What a decision was about, from the request as the fleet saw it: its subject, kind, and whether the subject is the agent's own question. */
export function decidedAbout(request: PendingRequest | undefined): Pick<Extract<HandledAction, { kind: "decided" }>, "detail" | "requestKind" | "asked"> {
  if (request?.kind !== "approval") return { detail: keptDetail(request?.detail) };
  return { detail: keptDetail(request.detail), requestKind: request.requestKind, ...(request.asked && { asked: true }) };
}

/** Longest command text a confirmation quotes. */
const DETAIL_LIMIT = 60;

/**
 * What was decided, in plain text: the command in quotes ("“npm test”"), or, where the server gave
 * only the agent's question, what kind of request it was with the question's words ("a command
 * (“Run npm test?”)"). Never Markdown: the line is shown as it is, so code marks would show raw.
 */
function decidedWhat(action: Extract<HandledAction, { kind: "decided" }>): string {
  // A command is quoted as it is (its backticks are shell); a question's are Markdown.
  const first = action.detail?.split("\n")[0] ?? "";
  const line = (action.asked ? plainText(first) : first).trim();
  const clipped = line.length > DETAIL_LIMIT ? `${line.slice(0, DETAIL_LIMIT - 1)}…` : line;
  const kind = action.requestKind ? `a ${idWords(action.requestKind)}` : "the request";
  if (!clipped) return kind;
  return action.asked ? `${kind} (“${clipped}”)` : `“${clipped}”`;
}

/** "Approved “npm test” for worker-2 on build-box-2": what was done, to which agent, on which machine. */
export function handledWords(entry: Pick<HandledEntry, "agent" | "machine" | "action">, time: (ms: number) => string): string {
  const who = `${entry.agent} on ${entry.machine}`;
  const action = entry.action;
  switch (action.kind) {
    case "decided": {
      const what = decidedWhat(action);
      switch (action.decision) {
        case "accept":
          return `Approved ${what} for ${who}`;
        case "acceptForSession":
          return `Approved ${what} for the session of ${who}`;
        case "acceptAlways":
          return `Approved ${what} always for ${who}`;
        case "decline":
          return `Denied ${what} for ${who}`;
        case "cancel":
          return `Denied ${what} and stopped the turn of ${who}`;
      }
      break;
    }
    case "answered":
      return `Answered ${who}`;
    case "acknowledged":
      return `Acknowledged ${who}`;
    case "unacknowledged":
      return `Brought back ${who}: no longer acknowledged`;
    case "reviewed":
      return `Marked the changes of ${who} reviewed`;
    case "unreviewed":
      return `Brought back ${who}: changes not reviewed`;
    case "snoozed":
      return `Snoozed ${who} ${wakeWords(action.until, time)}`;
    case "unsnoozed":
      return `Woke ${who}`;
    case "stopped":
      return `Stopped the session of ${who}`;
  }
}

/** When a snooze ends: "until 16:05", or "until it changes" (what the agent needs changes). */
export function wakeWords(until: number | null, time: (ms: number) => string): string {
  return until === null ? "until it changes" : `until ${time(until)}`;
}

/** Local midnight at the start of the day `now` falls in. */
export function startOfLocalDay(now: number): number {
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return day.getTime();
}

/** What was handled since `since`, newest first (`entries` in the order they happened: of two in the same millisecond, the later first). */
export function handledSince(entries: readonly HandledEntry[], since: number): HandledEntry[] {
  return entries
    .filter((entry) => entry.at >= since)
    .reverse()
    .sort((a, b) => b.at - a.at);
}

/** A decision T3 carries out for good and that ends work: asked once more before it is sent. */
export function destructiveDecision(decision: ApprovalDecision): boolean {
  return decision === "cancel";
}
