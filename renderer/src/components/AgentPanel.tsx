import { type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { ConfirmAction } from "./ConfirmAction";
import { providerName } from "../../../shared/fleet/provider-name";
import { ChangesAndUsage } from "./ChangesAndUsage";
import { ActionConfirmation } from "./ActionConfirmation";
import type { AgentView } from "../../../shared/fleet/types";
import { activeSnooze, snoozeWords } from "../../../shared/fleet/snooze";
import { acknowledgeable, needsYou, projectOf } from "../../../shared/fleet/views";
import { idWords, lastKnownWords } from "../../../shared/fleet/words";
import { dispatch } from "../state/dispatch";
import { focusTargets } from "../state/focus";
import { currentInbox } from "../state/inbox";
import { relativeTime } from "../state/format";
import { displayAgent } from "../state/selectors";
import { useFleetFacts } from "../state/fleet-facts";
import { useTranscriptDetail } from "../state/open-detail";
import { useFleet } from "../state/store";
import { ActionButton } from "./ActionButton";
import { Deliveries } from "./Receipts";
import { PendingCard } from "./RequestCards";
import { InterruptAction } from "./InterruptAction";
import { Composer } from "./Composer";
import { Clipped, PlaceError, StatusChip, useNow } from "./common";
import { Transcript } from "./Transcript";

export function AgentPanel({ agentKey }: { agentKey: string }) {
  const bridgeLostAt = useFleet((s) => s.bridgeLostAt);
  const raw = useFleet((s) => s.agents.get(agentKey));
  const agent = raw ? displayAgent(raw, bridgeLostAt) : undefined;
  const env = useFleet((s) => (agent ? s.environments.get(agent.environmentId) : undefined));
  const position = useInboxPosition(agentKey);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const now = useNow();
  // One element per agent: the memoized transcript is not rendered again by the panel's clock.
  const receipts = useMemo(() => <Deliveries agentKey={agentKey} />, [agentKey]);
  useEffect(() => {
    // Into the agent, unless the user already moved focus inside it (a key pressed while it opened).
    focusTargets.panel = () => {
      const heading = headingRef.current;
      if (heading && !heading.closest("section")?.contains(document.activeElement)) heading.focus();
    };
    return () => {
      focusTargets.panel = undefined;
    };
  }, []);
  // An answered card goes away with the button that had focus: focus comes back to the agent's
  // heading instead of falling to the page.
  const pendingIds = agent?.pending.map((request) => request.requestId).join(" ") ?? "";
  useEffect(() => {
    if (document.activeElement === document.body) headingRef.current?.focus();
  }, [pendingIds]);
  if (!agent) {
    return (
      <section className="panel" data-testid="agent-panel">
        <p>This agent is no longer on its environment.</p>
        <button type="button" onClick={() => dispatch("agent.close", "button")}>
          Back
        </button>
      </section>
    );
  }
  const project = projectOf(agent);
  const path = [project.repository, project.branch ? `⎇ ${project.branch}` : null].filter(Boolean).join(" · ");
  const machine = env?.label ?? agent.environmentId;
  const offline = agent.status === "unknown" || (env !== undefined && env.connection.phase !== "online");
  const asOf = agent.asOf ?? (env && "lastConfirmedAt" in env.connection ? env.connection.lastConfirmedAt : null);
  return (
    <section className={`panel ${offline ? "panel-offline" : ""}`} data-testid="agent-panel" aria-label={`Agent ${agent.title} on ${machine}`}>
      <header className="panel-header">
        <button type="button" onClick={() => (dispatch("agent.close", "button"), focusTargets.pane?.())} aria-label="Back to the list">
          ←
        </button>
        <h2 ref={headingRef} tabIndex={-1} title={agent.title}>
          {agent.title}
        </h2>
        <StatusChip status={agent.status} asOf={agent.asOf} stalled={agent.stalled} heldUp={agent.heldUp} acknowledged={agent.acknowledged} />
        {position ? (
          <span className="panel-position" data-testid="panel-position" title="Its place in the inbox">
            {position}
          </span>
        ) : null}
      </header>
      <div className="panel-where">
        <span className="panel-machine">on {machine}</span> · <Clipped className="panel-project" text={project.title} testId="agent-project-title" />
        <IdentityDetails agent={agent} machine={machine} path={path} />
      </div>
      <SnoozeLine agent={agent} now={now} />
      {offline ? (
        <p className="offline-banner" role="status" data-testid="offline-banner">
          {/* A status is read when it changes: the ticking "Nm ago" is for the eye, the clock time for everyone. */}
          <strong>{machine} is not online</strong> (last confirmed{" "}
          <span aria-hidden="true">
            {relativeTime(asOf, now)}
            {asOf ? ", " : ""}
          </span>
          {asOf ? new Date(asOf).toLocaleTimeString() : <span className="sr-only">never</span>}).{" "}
          {agent.status === "unknown" ? `Last known: ${lastKnownWords(agent)}. ` : ""}
          Below is what it last confirmed; nothing can be sent or answered until it is back.
        </p>
      ) : null}
      {/* What needs the user comes first: one Tab from the agent's heading reaches its choices. */}
      {agent.pending.length ? (
        <div className="panel-cards">
          {agent.pending.map((request) => (
            <PendingCard key={request.requestId} agent={agent} request={request} offline={offline} />
          ))}
        </div>
      ) : null}
      {agent.reason && agent.pending.length === 0 ? (
        <p className={`panel-reason ${agent.stalled ? "reason-stalled" : ""}`} data-testid="agent-reason">
          {agent.heldUp
            ? "Held up: still running, the provider is waiting. "
            : agent.stalled
              ? `Stalled: no new activity for ${relativeTime(agent.lastActivityAt, now).replace(" ago", "")}. `
              : ""}
          {agent.reason}
        </p>
      ) : agent.stalled ? (
        <p className="panel-reason reason-stalled" data-testid="agent-reason">
          Stalled: still running, but no new activity for {relativeTime(agent.lastActivityAt, now).replace(" ago", "")}.
        </p>
      ) : null}
      <AgentActions agent={agent} offline={offline} />
      <ChangesAndUsage agent={agent} />
      <div className="panel-body">
        <AgentTranscript
          key={agent.key}
          agentKey={agent.key}
          offline={offline}
          awaitingApproval={agent.pending.flatMap((request) => (request.kind === "approval" ? [request.detail] : [])).join("\n")}
          after={receipts}
        />
      </div>
      <ActionConfirmation inPanel />
      <Composer key={agent.key} agent={agent} />
    </section>
  );
}

/** Who and where the agent is: machine, project, provider and thread id, folded (its figures are always shown). */
function IdentityDetails({ agent, machine, path }: { agent: AgentView; machine: string; path: string }) {
  const project = projectOf(agent);
  return (
    <details className="identity-details" data-testid="agent-details">
      <summary>Details</summary>
      <dl className="identity">
        <dt>Machine</dt>
        <dd>
          <Clipped text={machine} />
        </dd>
        <dt>Project</dt>
        <dd>
          <Clipped text={[project.title, path].filter(Boolean).join(" · ")} testId="agent-project" />
        </dd>
        <dt>Provider</dt>
        <dd>
          {providerName(agent)} · {agent.model}
          {agent.effort ? ` · effort ${agent.effort}` : ""} · {idWords(agent.runtimeMode)}
        </dd>
        <dt>Thread</dt>
        <dd className="thread-line">
          <code data-testid="thread-id" title={agent.threadId}>
            {agent.threadId}
          </code>{" "}
          <CopyButton text={agent.threadId} what="thread id" />
        </dd>
      </dl>
    </details>
  );
}

/** Whether and where the agent is snoozed: "Snoozed on the server until 16:05", or in this window and why. */
function SnoozeLine({ agent, now }: { agent: AgentView; now: number }) {
  const own = useFleet((s) => s.snoozed.get(agent.key));
  const snooze = activeSnooze(agent, own, now);
  if (!snooze) return null;
  const time = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return (
    <p className="panel-snoozed" role="status" data-testid="snoozed">
      {snoozeWords(snooze, time)}
      {snooze.where === "fleet" && snooze.note ? ` (${snooze.note})` : ""}
    </p>
  );
}

/** "3 of 7" when the agent is in the inbox as shown. */
function useInboxPosition(agentKey: string): string | null {
  useFleetFacts();
  useFleet((s) => s.filters);
  useFleet((s) => s.search);
  useFleet((s) => s.snoozed);
  const items = currentInbox().items;
  const index = items.findIndex((agent) => agent.key === agentKey);
  return index >= 0 ? `${index + 1} of ${items.length}` : null;
}

/** The agent's actions, each saying what it will do; stopping the session asks first (agentCommands.stop). */
function AgentActions({ agent, offline }: { agent: AgentView; offline: boolean }) {
  const confirming = useFleet((s) => s.confirming);
  const confirmStop = confirming?.action === "stop" && confirming.key === agent.key ? confirming : null;
  const snoozable = needsYou(agent);
  return (
    <div className="panel-actions">
      {acknowledgeable(agent) ? (
        <ActionButton
          id="agent.acknowledge"
          testId="acknowledge"
          label="Acknowledge"
          title="Mark this failure as seen: it leaves the inbox and the count until it changes"
        />
      ) : null}
      {snoozable ? <ActionButton id="agent.snooze" testId="snooze" label="Snooze" title="Put it aside until what it needs changes" /> : null}
      {snoozable ? (
        <ActionButton
          id="agent.snooze-hour"
          testId="snooze-hour"
          label="Snooze 1 h"
          title="Put it aside for an hour, in T3 itself where the server has snooze"
        />
      ) : null}
      <InterruptAction agent={agent} />
      {agent.capabilities.stop ? (
        confirmStop ? (
          <ConfirmAction
            pending={confirmStop}
            question="Stop the session? The agent's process ends and T3 cannot undo it; a new message starts it again."
            confirmLabel="Stop session"
            testId="stop-confirm"
          />
        ) : (
          <ActionButton id="agent.stop" testId="stop" label="Stop session…" />
        )
      ) : null}
      {agent.lifecycle === "active" ? (
        <ActionButton id="agent.new-child" testId="new-child" label="New child" title="Start a new agent under this one, on its machine" />
      ) : null}
      <ActionButton
        id="agent.open-in-t3"
        testId="open-in-t3"
        label="Open in T3"
        disabled={offline}
        title={offline ? "Open in T3: its machine is not online, so its T3 web app cannot open" : "Open this thread in its machine's T3 web app"}
      />
      {offline ? (
        <span className="hint" data-testid="open-in-t3-reason">
          Open in T3 needs the machine online.
        </span>
      ) : null}
      <PlaceError place={`agent:${agent.key}`} />
    </div>
  );
}

/** Copies and says so. */
function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (copied === "idle") return;
    const timer = setTimeout(() => setCopied("idle"), 2_000);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button
      type="button"
      data-testid="copy"
      aria-label={`Copy the ${what}`}
      onClick={() =>
        void (navigator.clipboard?.writeText(text) ?? Promise.reject(new Error("no clipboard"))).then(
          () => setCopied("copied"),
          () => setCopied("failed"),
        )
      }
    >
      {copied === "copied" ? "Copied ✓" : copied === "failed" ? "Copy failed" : "Copy"}
    </button>
  );
}

/**
 * The transcript subscribes to the agent's detail on its own: a change renders the transcript, not
 * the panel's header, actions and composer around it; a streamed token renders only the reply it
 * grows (state/open-detail.ts).
 */
function AgentTranscript({ agentKey, offline, awaitingApproval, after }: { agentKey: string; offline: boolean; awaitingApproval: string; after: ReactNode }) {
  const detail = useTranscriptDetail(agentKey);
  return <Transcript detail={detail} offline={offline} awaitingApproval={awaitingApproval} after={after} />;
}
