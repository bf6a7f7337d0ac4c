// The neutral agent facts: what every protocol adapter turns its wire into, and all the fleet
// consumes (docs/architecture.md, "Neutral facts"). The fleet model, the status, delivery and
// notification rules, the bridge and every UI read only these types and never branch on the T3
// orchestration protocol. Each adapter documents its wire → facts mapping in docs/t3-protocols.md.
//
// Two streams carry facts per environment:
// - the fleet stream (one per connection): an `AgentFacts` per thread, as snapshots, upserts and
//   removals, then a synchronized mark (protocol 1: the shell stream; protocol 2: the V2 shell);
// - thread streams (one per followed thread): a `ThreadDetail` with the facts a fleet row does not
//   carry (request contents, failures the row never shows, native subagents, transcript items).
// Plain data only: the facts cross the bridge as JSON.

/** The T3 orchestration protocols an adapter exists for (descriptor `orchestrationProtocolVersion`, absent = 1). */
export const SUPPORTED_PROTOCOLS = [1, 2] as const;
export type OrchestrationProtocol = (typeof SUPPORTED_PROTOCOLS)[number];

// ------------------------------------------------------------------ one agent (fleet stream)

/** Where a thread is in its life. An archived thread can come back; a deleted one cannot. */
export type AgentLifecycle = "active" | "archived" | "deleted";

/**
 * How a child is linked to its parent:
 * - `child-id`: the id convention `sub.<parentThreadId>.<suffix>` (protocol 1; T3 itself gives it no meaning);
 * - `fork`: T3 forked the parent (protocol 2 `thread.lineage`);
 * - `subagent`: an app-owned delegated task of the parent (protocol 2 `thread.lineage`).
 */
export type ParentRelationship = "child-id" | "fork" | "subagent";

export interface ParentLink {
  threadId: string;
  relationship: ParentRelationship;
}

/**
 * Where the agent's current (or last) turn is. Protocol 1 calls it a turn, protocol 2 a run; the
 * facts say "run". `since` times are ISO strings from the server.
 */
export type RunState =
  /** Nothing is running and nothing was asked for (never ran, or the last turn settled). */
  | { phase: "idle" }
  /** The last run finished normally. */
  | { phase: "completed"; at: string | null }
  /**
   * A message was sent and no run has started for it yet. It stays here until a run starts or
   * fails: servers report "ready, no active turn" for a moment between starting and running
   * (protocol 1, real 0.0.42), which is not idle.
   */
  | { phase: "requested"; since: string }
  /** Protocol 2: the run is being prepared (workspace, provider). */
  | { phase: "preparing"; since: string }
  /** The provider session or run is starting. `since` is when it started, to tell a stuck start. */
  | { phase: "starting"; since: string }
  | { phase: "running"; since: string | null; note: string | null }
  /** The answer is final; background work (checkpointing, background tasks, subagents) drains. */
  | { phase: "waiting"; note: string | null }
  /** Queued behind the active run; position 1 is next, null when the server does not say. */
  | { phase: "queued"; position: number | null }
  /** The run or session failed. The reason may also come from the thread stream (`ThreadDetailFacts.lastErrorText`). */
  | { phase: "failed"; reason: string | null }
  | { phase: "interrupted" }
  | { phase: "cancelled" }
  | { phase: "rolled-back" }
  /** Protocol 1: the provider session was stopped. */
  | { phase: "stopped" };

/** What blocks an agent on the user, as the fleet row says (the request's contents come from the thread stream). */
export interface BlockedBy {
  kind: PendingRequestKind;
  /** Known on protocol 2 from the row; null on protocol 1 (only the thread stream names it). */
  requestId: string | null;
  since: string | null;
  /**
   * The server still lists the request but can no longer pass an answer on (protocol 1: its
   * provider session ended in an error, as after a T3 restart): why, in the server's words.
   */
  unanswerable?: string;
}

/**
 * How a message sent to a running agent is carried out:
 * - `steer`: folded into the running turn (T3 steers the provider);
 * - `queue`: a new turn starts after the running one.
 */
export type RunningMessageMode = "steer" | "queue";

/**
 * What the agent's harness was seen to do with a message sent while its turn runs, where T3 does
 * not report it itself (protocol 1; docs/t3-protocols.md, "Harnesses under T3"):
 * - `interrupts-reply`: it stops the reply it is writing and continues the same turn with the message;
 * - `after-reply`: it reads the message when its current reply ends, still in the same turn;
 * - `next-turn`: T3 starts a new turn with the message after the running one;
 * - `unobserved`: no test has run this harness; after sending, the fleet says what happened.
 */
export type RunningMessageBehaviour = "interrupts-reply" | "after-reply" | "next-turn" | "unobserved";

/**
 * What the fleet can do with this agent on its server. A capability the server lacks is a fact
 * too (e.g. cannot steer): the UI says so, never guesses.
 */
export interface AgentCapabilities {
  /**
   * What a message sent while a run is active can do; the first is what happens when the user does
   * not choose. Protocol 1: exactly one, as each harness was observed under T3 (`runningMessage`).
   * Protocol 2: both, the user chooses.
   */
  whileRunning: RunningMessageMode[];
  /** What the harness does with such a message, as observed; absent where T3 reports each message's outcome (protocol 2). */
  runningMessage?: RunningMessageBehaviour;
  interrupt: boolean;
  /** Stop the provider session (protocol 1 only). */
  stop: boolean;
  /** Cancel a queued run (protocol 2). */
  cancelQueued: boolean;
  /** Answer approvals and questions. */
  answer: boolean;
  /** Settle / snooze a thread, only where the server descriptor advertises it. */
  settle: boolean;
  snooze: boolean;
}

/** Provider, model and effort, as the server reports them; never guessed. */
export interface AgentProvider {
  instanceId: string;
  /** The driver behind the instance (codex, claudeAgent, grok, …) when the server says. */
  driver: string | null;
  model: string;
  effort: string | null;
}

/** One thread as the fleet stream reports it. */
export interface AgentFacts {
  threadId: string;
  projectId: string;
  /** Title of the project when the fleet stream carries it. */
  projectTitle: string | null;
  /** The project's workspace folder on the machine, when the fleet stream carries it. */
  workspaceRoot?: string | null;
  /** Git branch and worktree folder of the thread, when the server reports them. */
  branch?: string | null;
  worktreePath?: string | null;
  title: string;
  provider: AgentProvider;
  runtimeMode: string;
  interactionMode: string;
  parent: ParentLink | null;
  lifecycle: AgentLifecycle;
  run: RunState;
  /** The run a steer, queue or interrupt refers to (protocol 1 active turn id, protocol 2 active run id). */
  activeRunId: string | null;
  blockedBy: BlockedBy | null;
  /** Server time of the row's last change. A changed value is real activity; a re-sent row is not. */
  updatedAt: string;
  /** When the latest user message was sent, if known. */
  latestUserMessageAt: string | null;
  capabilities: AgentCapabilities;
  /** T3's own snooze: the thread is put aside until this time (server time, ISO), whoever snoozed it. */
  snoozedUntil?: string | null;
}

// ------------------------------------------------------------------ one followed thread (thread stream)

export type PendingRequestKind = "approval" | "input" | "auth-refresh";

/** Every decision T3 knows for an approval; a request offers a subset. */
export type ApprovalDecision = "accept" | "acceptForSession" | "acceptAlways" | "decline" | "cancel";

export interface ApprovalOption {
  decision: ApprovalDecision;
  label: string;
  warning: string | null;
}

export interface QuestionOption {
  label: string;
  description: string | null;
  /** What to answer when this option is chosen (the label where the server gives no value). */
  value: string;
}

export interface Question {
  id: string;
  header: string | null;
  question: string;
  options: QuestionOption[];
  multiSelect: boolean;
  /** A free-text answer is accepted (always so when there are no options). */
  allowsFreeText: boolean;
  required: boolean;
}

interface PendingBase {
  requestId: string;
  /** Command, file path or question text, as the provider reported it: what the request is about. */
  detail: string;
  createdAt: string;
}

/** A request that blocks the agent until the user answers it. */
export type PendingRequest =
  | (PendingBase & {
      kind: "approval";
      /** command, file-read, file-change, permission, … as the server names it. */
      requestKind: string | null;
      /** `detail` is the agent's question in its own words (protocol 2's prompt), not the command itself. */
      asked?: boolean;
      /** The decisions this request offers, in the server's order. */
      decisions: ApprovalOption[];
    })
  | (PendingBase & { kind: "input"; questions: Question[] })
  /** The provider needs its login refreshed on the machine; nothing to answer from the fleet. */
  | (PendingBase & { kind: "auth-refresh" });

/**
 * How a request stopped being pending, as the server recorded it: `resolved`, the agent took an
 * answer (`decision` where the server names it); `failed`, the server could not pass an answer on,
 * with its `reason` in the server's words.
 */
export type RequestEnd = { how: "resolved"; decision: string | null } | { how: "failed"; reason: string };

/** Answers to a question request: one string, or several for a multi-select question. */
export type QuestionAnswers = Record<string, string | string[]>;

export type SubagentStatus = "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted" | "stopped";

/** A native subagent reported inside its parent thread (protocol 1 `task.*` activities, protocol 2 `subagent` items). */
export interface SubagentFacts {
  id: string;
  status: SubagentStatus;
  /** What it works on (task summary or title). */
  title: string | null;
  /** Task type (protocol 1) or origin (protocol 2), when reported. */
  kind: string | null;
  model: string | null;
  /** The child thread that carries it, when the server links one; the fleet shows it there. */
  childThreadId: string | null;
  /** Why it failed or stopped, as the server said; absent or null when it did not. */
  reason?: string | null;
  updatedAt: string;
}

/** What a followed thread's stream adds to its row. */
export interface ThreadDetailFacts {
  pending: PendingRequest[];
  /** Newest error text seen in the thread (used when the row's failure has no reason). */
  lastErrorText: string | null;
  /**
   * A failure the fleet row does not show: a turn that could not start (`runId` null: it counts
   * while no run is active), or a capacity limit on the active run `runId`, which the row still
   * reports as running (shown running but held up, not failed: the provider retries). It counts only while the row's active run is that `runId`, and not once
   * the user sent a message after it (`at`, when known).
   */
  hiddenFailure: { reason: string; runId: string | null; at?: string } | null;
  subagents: SubagentFacts[];
  /** The thread stream's view of the active run (for delivery outcomes and interrupts). */
  activeRunId: string | null;
  /** The thread stream's view of the run (may be ahead of or behind the row). */
  run: RunState | null;
  /** Server time of the newest event applied; a new value is real activity. */
  lastEventAt: string | null;
  /**
   * Protocol 2: what became of each user message the thread shows, by messageId (the observed
   * result of a send). Absent on protocol 1, whose transcript alone tells delivery.
   */
  messageOutcomes?: Record<string, MessageOutcome>;
  /**
   * How T3 recorded each request that is no longer pending, by requestId: the only ground for
   * saying an answer reached the agent (docs/t3-protocols.md, "What closes a request or a delivery").
   */
  requestEnds?: Record<string, RequestEnd>;
  /** The files each turn changed, oldest first, as T3's checkpoints report them; absent or empty when none was reported. */
  changes?: TurnChanges[];
  /** The thread's token use and context fill as T3 last reported it; null or absent: not reported (never zero). */
  usage?: UsageFacts | null;
  /**
   * The thread's last turn ended and T3 reported what it reports after a turn: protocol 1 a token
   * report and the turn's checkpoint (`thread.turn-diff-completed`); protocol 2 no run is left
   * `waiting` (checkpointing) or queued. Absent or false: more may come (a workspace that is not a
   * git repository never gets a protocol 1 checkpoint).
   */
  lastTurnReported?: boolean;
}

/**
 * What T3 made of a turn's checkpoint: `ready` (files and diff readable), `missing` (no checkpoint
 * was captured, e.g. the turn was interrupted or the workspace is not a git repository) or `error`
 * (capturing it failed).
 */
export type CheckpointStatus = "ready" | "missing" | "error";

export interface ChangedFile {
  path: string;
  /** added, modified, deleted, renamed… as T3 names it. */
  kind: string;
  /** Lines added and removed; null when T3 did not report an exact count (never zero). */
  additions: number | null;
  deletions: number | null;
}

/** One turn's changes (protocol 1 thread `checkpoints[]`, protocol 2 `checkpoint` entities of app runs). */
export interface TurnChanges {
  /** The turn's number in the thread (1 is the first): what a diff is read by (`fromTurnCount` = turnCount − 1). */
  turnCount: number;
  /** The turn or run it belongs to, when known. */
  runId: string | null;
  status: CheckpointStatus;
  /** The turn's files, at most TURN_FILES_KEPT (shared/t3/turn-files.ts) of them. */
  files: ChangedFile[];
  /** The whole list's counts when T3 listed more files than `files` keeps; absent: `files` is the whole list. */
  totals?: TurnFileTotals;
  completedAt: string | null;
}

/** A turn's counts over all its files, listed or not; a line count any file did not report is null. */
export interface TurnFileTotals {
  files: number;
  additions: number | null;
  deletions: number | null;
}

/** Token counts as a server reports them; a count it does not report is null, never zero. */
export interface TokenCounts {
  total: number | null;
  input: number | null;
  cachedInput: number | null;
  output: number | null;
  reasoning: number | null;
}

/**
 * A thread's token use and context window, from what T3 reports (protocol 1 `context-window.updated`,
 * protocol 2 provider turns). Two kinds of figure, never mixed: the context fill (what the window
 * holds now) and tokens T3 reported as processed. A context size is never use (issue 39).
 */
export interface UsageFacts {
  /** Tokens in the context window now and its size, when reported: the context fill, never use. */
  contextUsed: number | null;
  contextMax: number | null;
  /** Whether the provider compacts the context by itself when it fills; null when the server does not say. */
  compactsAutomatically: boolean | null;
  /** The tokens of the latest turn, or of the latest model request where that is all T3 reports (`lastScope`), when reported. */
  lastTurn: TokenCounts | null;
  /** What `lastTurn` counts: one turn (absent: a turn), or one model request (protocol 1: T3 0.0.42 reports the last request's figures). */
  lastScope?: "turn" | "request";
  /** The tokens T3 reported for the thread so far, when it reported a thread figure. */
  thread: TokenCounts | null;
  /** Server time of the report. */
  reportedAt: string;
}

/** What a thread's stream says before it said anything (not loaded, or no thread). */
export function noThreadFacts(): ThreadDetailFacts {
  return { pending: [], lastErrorText: null, hiddenFailure: null, subagents: [], activeRunId: null, run: null, lastEventAt: null };
}

/**
 * The run a message started (`started`), the queue it waits in (`queued`, position 1 is next), the
 * active run it steered (`joined`), or its queued run cancelled before it started (`cancelled`).
 */
export interface MessageOutcome {
  runId: string;
  how: "started" | "queued" | "joined" | "cancelled";
  queuePosition: number | null;
}

/**
 * A user message the server holds back (protocol 2): its run waits behind the running one
 * (`queued`, position 1 is next, null when the server does not say), or was cancelled before it
 * started (`cancelled`). Absent once the message's run started, and on protocol 1.
 */
export type MessageQueueState = { state: "queued"; position: number | null } | { state: "cancelled" };

export type TranscriptItemStatus = "pending" | "running" | "completed" | "failed" | "interrupted" | "cancelled" | "unknown";

interface ItemBase {
  id: string;
  /** The turn or run it belongs to, when known. */
  runId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One entry of a thread's transcript, in order. */
export type TranscriptItem =
  /** A message; `text` is cumulative (the whole text so far), never a delta. */
  | (ItemBase & { type: "message"; role: "user" | "assistant" | "system"; text: string; streaming: boolean; queue?: MessageQueueState })
  | (ItemBase & { type: "command"; command: string; exitCode: number | null; status: TranscriptItemStatus })
  | (ItemBase & { type: "file-change"; path: string; additions: number | null; deletions: number | null; status: TranscriptItemStatus })
  | (ItemBase & { type: "error"; message: string })
  /** Anything else worth a line (tool calls, warnings, plans, checkpoints): a summary and a tone. */
  | (ItemBase & { type: "activity"; kind: string; summary: string; tone: "info" | "tool" | "approval" | "error" });

/** Everything a followed thread stream currently knows. */
export interface ThreadDetail {
  threadId: string;
  /** False until the stream delivered its first snapshot. */
  loaded: boolean;
  /** The stream caught up on the current connection (snapshot or resume marker seen). */
  synced: boolean;
  facts: ThreadDetailFacts;
  /**
   * A bounded tail of the transcript (shared/fleet/transcript-tail.ts), after `anchored` compact
   * records of messages that left it (text cut), kept by id for the delivery rules: not the transcript.
   */
  items: TranscriptItem[];
  /** How many items at the start of `items` are anchors, not the transcript (absent: none). */
  anchored?: number;
  /** The thread's older items were let go: the transcript starts after them (T3 keeps them). */
  earlier?: boolean;
  /**
   * The highest server sequence applied to this thread; comparable with a `CommandReceipt.sequence`
   * of the same adapter, so "the effect of my command is in what I see" can be decided.
   */
  appliedSequence: number;
  /** Why the stream cannot be read (e.g. the thread no longer exists). */
  error: string | null;
}
