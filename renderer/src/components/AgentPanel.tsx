import { useState } from "react";
import type { AgentDetail } from "../../../shared/bridge/contract";
import type { Delivery } from "../../../shared/fleet/delivery";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import type { AgentView, PendingRequest } from "../../../shared/fleet/types";
import { commands } from "../state/effects";
import { DELIVERY_LABEL, relativeTime } from "../state/format";
import { useFleet } from "../state/store";
import { Composer } from "./Composer";
import { RichText } from "./RichText";
import { StatusChip, useNow } from "./common";

export function AgentPanel({ agentKey }: { agentKey: string }) {
  const agent = useFleet((s) => s.agents.get(agentKey));
  const env = useFleet((s) => (agent ? s.environments.get(agent.environmentId) : undefined));
  const detail = useFleet((s) => s.details.get(agentKey));
  const now = useNow();
  if (!agent) {
    return (
      <section className="panel" data-testid="agent-panel">
        <p>This agent is no longer on its environment.</p>
        <button type="button" onClick={() => commands.closeAgent()}>
          Back
        </button>
      </section>
    );
  }
  return (
    <section className="panel" data-testid="agent-panel" aria-label={`Agent ${agent.title}`}>
      <header className="panel-header">
        <button type="button" onClick={() => commands.closeAgent()} aria-label="Back to the fleet">
          ← Fleet
        </button>
        <h2>{agent.title}</h2>
        <StatusChip status={agent.status} asOf={agent.asOf} stalled={agent.stalled} />
        {agent.status === "unknown" ? <span className="as-of">was {agent.lastKnownStatus} · as of {relativeTime(agent.asOf, now)}</span> : null}
      </header>
      <dl className="identity">
        <dt>Machine</dt>
        <dd>{env?.label ?? agent.environmentId}</dd>
        <dt>Provider</dt>
        <dd>
          {agent.providerInstanceId}
          {agent.providerDriver && agent.providerDriver !== agent.providerInstanceId ? ` (${agent.providerDriver})` : ""}
        </dd>
        <dt>Model</dt>
        <dd>
          {agent.model}
          {agent.effort ? ` · effort ${agent.effort}` : ""}
        </dd>
        <dt>Mode</dt>
        <dd>{agent.runtimeMode}</dd>
        <dt>Thread</dt>
        <dd>
          <code data-testid="thread-id">{agent.threadId}</code>{" "}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(agent.threadId)}>
            Copy
          </button>
        </dd>
        {agent.reason ? (
          <>
            <dt>Why</dt>
            <dd data-testid="agent-reason">{agent.reason}</dd>
          </>
        ) : null}
      </dl>
      <div className="panel-actions">
        <button type="button" disabled={agent.status !== "running" && agent.status !== "starting"} onClick={() => void commands.interrupt(agent.key)}>
          Interrupt
        </button>
        <button type="button" disabled={agent.status === "ended" || agent.status === "unknown"} onClick={() => void commands.stop(agent.key)}>
          Stop session
        </button>
      </div>
      {agent.pending.map((request) => (
        <PendingCard key={request.requestId} agent={agent} request={request} />
      ))}
      <div className="panel-body">
        <Transcript detail={detail} offline={env?.connection.phase !== "online"} />
        <Activities detail={detail} agent={agent} now={now} />
      </div>
      <Deliveries agentKey={agent.key} />
      <Composer agent={agent} />
    </section>
  );
}

function PendingCard({ agent, request }: { agent: AgentView; request: PendingRequest }) {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  if (request.kind === "approval") {
    return (
      <div className="card pending" data-testid="approval-card">
        <strong>Approval requested{request.requestKind ? ` (${request.requestKind})` : ""}</strong>
        <pre>{request.detail}</pre>
        <div className="card-actions">
          {request.decisions.map((option, index) => (
            <button
              key={option.decision}
              type="button"
              className={index === 0 ? "primary" : undefined}
              title={option.warning ?? undefined}
              onClick={() => void commands.respondApproval(agent.key, request.requestId, option.decision)}
            >
              {option.label}
            </button>
          ))}
        </div>
      </div>
    );
  }
  if (request.kind === "auth-refresh") {
    return (
      <div className="card pending" data-testid="auth-card">
        <strong>The provider must log in again on this machine</strong>
        <pre>{request.detail}</pre>
      </div>
    );
  }
  return (
    <form
      className="card pending"
      data-testid="input-card"
      onSubmit={(event) => {
        event.preventDefault();
        void commands.respondInput(agent.key, request.requestId, answers);
      }}
    >
      <strong>The agent asks</strong>
      {request.questions.map((question) => (
        <label key={question.id}>
          {question.question}
          {question.options.length > 0 ? (
            <select value={answers[question.id] ?? ""} onChange={(event) => setAnswers({ ...answers, [question.id]: event.target.value })}>
              <option value="">Choose…</option>
              {question.options.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
          ) : (
            <input value={answers[question.id] ?? ""} onChange={(event) => setAnswers({ ...answers, [question.id]: event.target.value })} />
          )}
        </label>
      ))}
      <button type="submit" className="primary">
        Answer
      </button>
    </form>
  );
}

function Transcript({ detail, offline }: { detail: AgentDetail | undefined; offline: boolean }) {
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
      {detail.items.flatMap((message) => (message.type === "message" ? [message] : [])).map((message) => (
        <article key={message.id} className={`message message-${message.role}`} data-testid={`message-${message.role}`} data-turn={message.runId ?? ""}>
          <header>
            {message.role}
            {message.streaming ? <span className="streaming"> · streaming</span> : null}
          </header>
          <RichText text={message.text} />
        </article>
      ))}
    </div>
  );
}

function Activities({ detail, agent, now }: { detail: AgentDetail | undefined; agent: AgentView; now: number }) {
  const activities = detail?.items.filter((item) => item.type !== "message") ?? [];
  return (
    <aside className="activities" data-testid="activities">
      <h3>Activity</h3>
      {agent.subagents.length > 0 ? (
        <ul className="subagents">
          {agent.subagents.map((task) => (
            <li key={task.id}>
              subagent {task.id}: {task.status} {task.title ? `· ${task.title}` : ""}
            </li>
          ))}
        </ul>
      ) : null}
      <ol>
        {activities.map((item) => (
          <li key={item.id} className={`activity tone-${item.type === "activity" ? item.tone : item.type === "error" ? "error" : "tool"}`}>
            <span className="activity-kind">{item.type === "activity" ? item.kind : item.type}</span> {itemSummary(item)}{" "}
            <span className="time">{relativeTime(item.createdAt, now)}</span>
          </li>
        ))}
      </ol>
    </aside>
  );
}

/** One line for a transcript item that is not a message. */
function itemSummary(item: TranscriptItem): string {
  switch (item.type) {
    case "command":
      return `${item.command}${item.exitCode === null ? "" : ` (exit ${item.exitCode})`}`;
    case "file-change":
      return `${item.path}${item.additions === null ? "" : ` +${item.additions}`}${item.deletions === null ? "" : ` -${item.deletions}`}`;
    case "error":
      return item.message;
    case "activity":
      return item.summary;
    default:
      return item.text;
  }
}

function Deliveries({ agentKey }: { agentKey: string }) {
  const deliveries = useFleet((s) => s.deliveries);
  const mine = [...deliveries.values()].filter((delivery) => delivery.agentKey === agentKey).slice(-6);
  if (mine.length === 0) return null;
  return (
    <ul className="deliveries" data-testid="deliveries">
      {mine.map((delivery) => (
        <DeliveryLine key={delivery.commandId} delivery={delivery} />
      ))}
    </ul>
  );
}

function DeliveryLine({ delivery }: { delivery: Delivery }) {
  const what = delivery.kind === "message" ? `“${delivery.text ?? ""}”` : delivery.kind;
  const observed = delivery.observed ? (delivery.observed.outcome === "steered" ? " · joined the running turn" : " · started a new turn") : "";
  return (
    <li className={`delivery delivery-${delivery.state}`} data-testid="delivery" data-state={delivery.state} data-outcome={delivery.observed?.outcome ?? ""}>
      <span className="delivery-what">{what}</span> <span className="delivery-state">{DELIVERY_LABEL[delivery.state]}</span>
      {observed}
      {delivery.reason ? <span className="delivery-reason"> · {delivery.reason}</span> : null}
      {delivery.state === "uncertain" ? (
        <button type="button" onClick={() => void commands.recheck(delivery.commandId)}>
          Check again
        </button>
      ) : null}
    </li>
  );
}
