// Wire-shaped entities of a simulated protocol-2 server (docs/t3-protocols.md, "Protocol 2"): the
// fields T3's real V2 engine sends (sim/protocol2/recordings-conformance.test.ts compares them with its
// recordings), which the contract check in shared/t3/protocol2/contract.testkit.ts also reads.
import type { ProviderKind } from "../providers";

export type RunStatus = "preparing" | "queued" | "starting" | "running" | "waiting" | "completed" | "interrupted" | "failed" | "cancelled" | "rolled_back";
export type ItemStatus = "idle" | "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted";
export const ACTIVE_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(["preparing", "starting", "running", "waiting"]);
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "interrupted", "failed", "cancelled", "rolled_back"]);

export interface ModelSelection {
  instanceId: string;
  model: string;
}

export interface Lineage {
  parentThreadId: string | null;
  relationshipToParent: "fork" | "subagent" | null;
  rootThreadId: string;
}

export interface AppThread {
  createdBy: "user" | "agent" | "system";
  creationSource: "web" | "mobile" | "mcp" | "provider" | "server";
  id: string;
  projectId: string;
  title: string;
  providerInstanceId: string;
  modelSelection: ModelSelection;
  runtimeMode: "approval-required" | "auto-accept-edits" | "auto" | "full-access";
  interactionMode: "default" | "plan";
  branch: string | null;
  worktreePath: string | null;
  activeProviderThreadId: string | null;
  historyOrigin?: "native" | "v1_import";
  lineage: Lineage;
  forkedFrom: { type: "run"; threadId: string; runId: string } | null;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
  settledOverride: null;
  settledAt: null;
  snoozedUntil: string | null;
  snoozedAt: string | null;
  lastVisitedAt: null;
  deletedAt: string | null;
}

export interface Run {
  id: string;
  threadId: string;
  ordinal: number;
  providerInstanceId: string;
  modelSelection: ModelSelection;
  providerThreadId: string | null;
  userMessageId: string;
  rootNodeId: string | null;
  activeAttemptId: string | null;
  status: RunStatus;
  queuePosition?: number | null;
  requestedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  checkpointId: string | null;
  contextHandoffId: string | null;
}

export interface ProviderRef {
  driver: string;
  nativeId: string | null;
  strength: "strong" | "weak" | "none";
}

interface ItemBase {
  id: string;
  threadId: string;
  runId: string | null;
  nodeId: string | null;
  providerThreadId: string | null;
  providerTurnId: string | null;
  nativeItemRef: ProviderRef | null;
  parentItemId: string | null;
  ordinal: number;
  status: ItemStatus;
  title: string | null;
  startedAt: string | null;
  completedAt: string | null;
  updatedAt: string;
}

export interface Question {
  id: string;
  header: string;
  question: string;
  options: { label: string; description: string; value?: string }[];
  multiSelect?: boolean;
  allowCustomAnswer?: boolean;
  required?: boolean;
}

export type FailureClass = "provider_error" | "transport_error" | "permission_error" | "validation_error" | "unknown";
export type ApprovalKind = "command" | "file-read" | "file-change" | "mcp-elicitation" | "permission";
export type Decision = "accept" | "acceptForSession" | "acceptAlways" | "decline" | "cancel";

export type TurnItem = ItemBase &
  (
    | {
        type: "user_message";
        createdBy: "user" | "agent" | "system";
        creationSource: "web" | "mobile" | "mcp" | "provider" | "server";
        messageId: string;
        inputIntent: "turn_start" | "queued_turn" | "steer" | "promoted_queued_to_steer";
        text: string;
        attachments: unknown[];
      }
    | { type: "assistant_message"; messageId: string; text: string; streaming: boolean }
    | { type: "command_execution"; input: string; output: string | null; exitCode?: number }
    | { type: "file_change"; fileName: string; additions?: number; deletions?: number }
    | {
        type: "approval_request";
        requestId: string;
        requestKind: ApprovalKind;
        prompt?: string;
        options?: { decision: Decision; label: string }[];
      }
    | { type: "user_input_request"; requestId: string; questions: Question[]; responseMode?: "message" }
    | { type: "checkpoint"; checkpointId: string; scopeId: string; files: { path: string; kind: string; additions: number; deletions: number }[] }
    | { type: "run_interrupt_request" | "run_interrupt_result" | "system_notice"; message: string }
    | {
        type: "error";
        failure: { class: FailureClass; message: string; code: string | null; retryable: boolean | null };
        retry?: { attempt: number; maxAttempts: number | null; retryDelayMs: number | null };
      }
    | {
        type: "subagent";
        subagentId: string;
        origin: "provider_native" | "app_owned";
        driver: string;
        providerInstanceId: string;
        childThreadId: string | null;
        prompt: string;
        progress?: string;
        result: string | null;
      }
  );

export interface RuntimeRequest {
  id: string;
  nodeId: string;
  providerTurnId: string | null;
  nativeRequestRef: ProviderRef | null;
  kind: ApprovalKind | "dynamic_tool_call" | "user_input" | "auth_refresh";
  status: "pending" | "resolved" | "expired" | "cancelled";
  responseCapability: { type: "live"; providerSessionId: string } | { type: "message" } | { type: "not_resumable"; reason: string };
  createdAt: string;
  resolvedAt: string | null;
  decision?: Decision;
  answers?: Record<string, unknown>;
}

export interface Subagent {
  id: string;
  threadId: string;
  runId: string | null;
  parentNodeId: string;
  origin: "provider_native" | "app_owned";
  createdBy: "user" | "agent" | "system";
  driver: string;
  providerInstanceId: string;
  providerThreadId: string | null;
  childThreadId: string | null;
  nativeTaskRef: ProviderRef | null;
  prompt: string;
  title: string | null;
  model: string | null;
  status: ItemStatus;
  progress?: string;
  result: string | null;
  startedAt: string | null;
  completedAt: string | null;
  updatedAt: string;
}

export interface ProviderSession {
  id: string;
  driver: string;
  providerInstanceId: string;
  status: "starting" | "ready" | "running" | "waiting" | "stopped" | "error";
  cwd: string;
  model: string | null;
  capabilities: Record<string, Record<string, boolean | string | number | null>>;
  createdAt: string;
  updatedAt: string;
  lastError: string | null;
}

export interface ConversationMessage {
  createdBy: "user" | "agent" | "system";
  creationSource: "web" | "mobile" | "mcp" | "provider" | "server";
  id: string;
  threadId: string;
  runId: string | null;
  nodeId: string | null;
  role: "user" | "assistant" | "system";
  text: string;
  attachments: unknown[];
  streaming: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ProjectShell {
  id: string;
  title: string;
  workspaceRoot: string;
  repositoryIdentity: unknown;
  defaultModelSelection: ModelSelection | null;
  defaultThreadEnvMode: string | null;
  faviconPath: string | null;
  scripts: unknown[];
  createdAt: string;
  updatedAt: string;
}

/**
 * Which providers accept `steer_active` on protocol 2 (the provider's active-steering capability).
 * Kept apart from protocol 1's rule in sim/protocol1/agents.ts, where T3 itself decides per provider.
 */
export const V2_ACTIVE_STEERING: Record<ProviderKind, boolean> = { codex: true, claudeAgent: true, opencode: true, grok: false };

/** The provider capabilities a session advertises; the fleet reads none of them. */
export function capabilitiesFor(provider: ProviderKind): ProviderSession["capabilities"] {
  const steers = V2_ACTIVE_STEERING[provider];
  return {
    sessions: {
      supportsMultipleProviderThreadsPerSession: false,
      supportsModelSwitchInSession: true,
      supportsProviderSwitchingViaHandoff: true,
      supportsRuntimeModeSwitchInSession: true,
      pendingRequestsSurviveRestart: false,
    },
    threads: {
      canCreateEmptyThread: true,
      canReadThreadSnapshot: true,
      canRollbackThread: true,
      canForkThread: true,
      canForkFromTurn: true,
      canForkFromSubagentThread: false,
      exposesNativeThreadId: true,
    },
    turns: {
      exposesNativeTurnId: true,
      emitsTurnStarted: true,
      emitsTurnCompleted: true,
      supportsInterrupt: true,
      supportsActiveSteering: steers,
      supportsSteeringByInterruptRestart: true,
      supportsQueuedMessages: true,
      terminalStatusQuality: "strong",
    },
    streaming: { streamsAssistantText: true, streamsReasoning: true, streamsToolOutput: true, streamsPlanText: true, emitsMessageCompleted: true },
    tools: {
      exposesToolItemIds: true,
      emitsToolStarted: true,
      emitsToolCompleted: true,
      emitsToolOutput: true,
      supportsMcpTools: true,
      supportsDynamicToolCallbacks: false,
    },
    approvals: {
      supportsCommandApproval: true,
      supportsFileReadApproval: true,
      supportsFileChangeApproval: true,
      supportsApplyPatchApproval: true,
      approvalsHaveNativeRequestIds: true,
      approvalCallbacksAreLiveOnly: true,
      approvalsCanOriginateFromSubagents: false,
    },
    planning: { emitsPlanUpdated: true, emitsTodoList: true, emitsProposedPlan: true, supportsStructuredQuestions: true, planDeltasHaveItemIds: true },
    subagents: {
      supportsSubagents: true,
      exposesSubagentThreadIds: false,
      emitsSubagentLifecycle: true,
      canWaitForSubagents: true,
      canCloseSubagents: false,
      canForkSubagentThread: false,
    },
    context: {
      acceptsSystemContext: true,
      acceptsDeveloperContext: true,
      acceptsSyntheticUserContext: true,
      canGenerateSummaries: true,
      canConsumeHandoffSummaries: true,
      supportsDeltaHandoff: true,
      supportsFullThreadHandoff: true,
      maxRecommendedHandoffChars: null,
    },
    checkpointing: {
      appCanCheckpointFilesystem: true,
      supportsNestedCheckpointScopes: false,
      providerCanRollbackConversation: false,
      providerRollbackReturnsSnapshot: false,
      providerCanReadConversationSnapshot: true,
    },
    identity: { nativeThreadIds: "strong", nativeTurnIds: "strong", nativeItemIds: "weak", nativeRequestIds: "strong" },
  };
}

/** The engine-internal entities the real engine also sends (the fleet reads none of them). */
export interface RunAttempt {
  id: string;
  runId: string;
  attemptOrdinal: number;
  rootNodeId: string;
  providerInstanceId: string;
  providerThreadId: string | null;
  providerTurnId: string | null;
  reason: "initial";
  status: "pending" | "running" | "completed" | "failed" | "interrupted" | "cancelled";
  startedAt: string | null;
  completedAt: string | null;
}

export interface RunNode {
  id: string;
  threadId: string;
  runId: string;
  parentNodeId: string | null;
  rootNodeId: string;
  /** Named after what it carries, as recorded (root_turn, tool_call, approval_request, assistant_message); a question's by analogy. */
  kind: "root_turn" | "tool_call" | "assistant_message" | "approval_request" | "user_input_request";
  status: ItemStatus;
  countsForRun: boolean;
  providerThreadId: string | null;
  providerTurnId: string | null;
  nativeItemRef: ProviderRef | null;
  runtimeRequestId: string | null;
  checkpointScopeId: string | null;
  startedAt: string | null;
  completedAt: string | null;
}

export interface ProviderThread {
  id: string;
  driver: string;
  providerInstanceId: string;
  providerSessionId: string;
  appThreadId: string;
  ownerNodeId: null;
  nativeThreadRef: ProviderRef | null;
  nativeConversationHeadRef: null;
  status: "not_loaded" | "active" | "idle";
  firstRunOrdinal: number;
  lastRunOrdinal: number;
  handoffIds: string[];
  forkedFrom: null;
  pendingBackgroundTasks: unknown[];
  createdAt: string;
  updatedAt: string;
}

export interface ProviderTurn {
  id: string;
  providerThreadId: string;
  nodeId: string;
  runAttemptId: string;
  nativeTurnRef: ProviderRef;
  ordinal: number;
  status: "running" | "completed" | "failed" | "interrupted";
  startedAt: string;
  completedAt: string | null;
  /** Live context usage (contract `OrchestrationV2ProviderTurnTokenUsage`, upstream #8144). */
  tokenUsage?: {
    usedTokens: number;
    maxTokens?: number | null;
    inputTokens?: number;
    cachedInputTokens?: number;
    outputTokens?: number;
    reasoningOutputTokens?: number;
    updatedAt: string;
  };
  /** The turn's main-agent tokens (contract `TurnTokenUsage`). */
  turnTokenUsage?: {
    usageScope: "main_agent";
    usageStatus: "complete" | "partial" | "unavailable";
    inputTokens?: number;
    outputTokens?: number;
    cachedInputTokens?: number;
    reasoningTokens?: number;
    hasSubagents: boolean;
  };
}

export interface CheckpointScope {
  id: string;
  threadId: string;
  runId: string;
  nodeId: string;
  parentScopeId: null;
  providerThreadId: string | null;
  kind: "root_run";
  ordinalWithinParent: number;
  advancesAppRunCount: boolean;
  cwd: string;
  createdAt: string;
}

export interface Checkpoint {
  id: string;
  threadId: string;
  scopeId: string;
  runId: string | null;
  nodeId: string;
  parentCheckpointId: string | null;
  ordinalWithinScope: number;
  appRunOrdinal: number | null;
  ref: string;
  status: "ready" | "missing";
  files: { path: string; kind: string; additions: number; deletions: number }[];
  capturedAt: string;
}
