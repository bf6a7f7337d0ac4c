import { useEffect, useRef, useState } from "react";
import type { Delivery } from "../../../shared/fleet/delivery";
import type { AgentView, PendingRequest } from "../../../shared/fleet/types";
import { acknowledgeable, projectOf } from "../../../shared/fleet/views";
import type { ApprovalDecision } from "../../../shared/t3/commands";
import { commands, focusTargets } from "../state/effects";
import { DELIVERY_LABEL, relativeTime } from "../state/format";
import { displayAgent } from "../state/selectors";
import { useFleet } from "../state/store";
import { CommandButton } from "./CommandButton";
import { Composer } from "./Composer";
import { Clipped, PlaceError, StatusChip, useNow } from "./common";
import { Transcript } from "./Transcript";

export function AgentPanel({ agentKey }: { agentKey: string }) {
  const bridgeLostAt = useFleet((s) => s.bridgeLostAt);
  const raw = useFleet((s) => s.agents.get(agentKey));
  const agent = raw ? displayAgent(raw, bridgeLostAt) : undefined;
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
  const project = projectOf(agent);
  const where = [project.title, project.repository, project.branch ? `⎇ ${project.branch}` : null].filter(Boolean).join(" · ");
  return (
    <section className="panel" data-testid="agent-panel" aria-label={`Agent ${agent.title}`}>
      <header className="panel-header">
        <button type="button" onClick={() => commands.closeAgent()} aria-label="Back to the fleet">
          ← Fleet
        </button>
        <h2 title={agent.title}>{agent.title}</h2>
        <StatusChip status={agent.status} asOf={agent.asOf} stalled={agent.stalled} />
        {agent.status === "unknown" ? <span className="as-of">was {agent.lastKnownStatus} · as of {relativeTime(agent.asOf, now)}</span> : null}
      </header>
      <div className="panel-actions">
        {acknowledgeable(agent) ? <CommandButton id="agent.acknowledge" testId="acknowledge" label="Acknowledge" /> : null}
        <CommandButton id="agent.interrupt" testId="interrupt" label="Interrupt" />
        <CommandButton id="agent.stop" testId="stop" label="Stop session" />
        <CommandButton id="agent.open-in-t3" testId="open-in-t3" label="Open in T3" />
        <PlaceError place={`agent:${agent.key}`} />
      </div>
      <dl className="identity">
        <dt>Machine</dt>
        <dd>
          <Clipped text={env?.label ?? agent.environmentId} />
        </dd>
        <dt>Project</dt>
        <dd>
          <Clipped text={where} testId="agent-project" />
        </dd>
        <dt>Provider</dt>
        <dd>
          {agent.providerInstanceId}
          {agent.providerDriver && agent.providerDriver !== agent.providerInstanceId ? ` (${agent.providerDriver})` : ""} · {agent.model}
          {agent.effort ? ` · effort ${agent.effort}` : ""} · {agent.runtimeMode}
        </dd>
        <dt>Thread</dt>
        <dd className="thread-line">
          <code data-testid="thread-id" title={agent.threadId}>
            {agent.threadId}
          </code>{" "}
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
      {agent.pending.map((request) => (
        <PendingCard key={request.requestId} agent={agent} request={request} />
      ))}
      <div className="panel-body">
        <Transcript detail={detail} offline={env?.connection.phase !== "online"} now={now} />
      </div>
      <Deliveries agentKey={agent.key} />
      <Composer agent={agent} />
    </section>
  );
}

/** Optional fields protocol 2 brings to a pending request (the "facts" and "v2" helpers add them to the view). */
interface RequestExtras {
  decisions?: { decision: string; label?: string }[];
}
interface QuestionExtras {
  header?: string;
  multiSelect?: boolean;
  allowCustomAnswer?: boolean;
  required?: boolean;
}

const DECISION_WORDS: Record<ApprovalDecision, string> = { accept: "Accept", acceptForSession: "Accept for session", decline: "Decline", cancel: "Cancel the turn" };
const DEFAULT_DECISIONS: ApprovalDecision[] = ["accept", "acceptForSession", "decline"];

function isDecision(value: string): value is ApprovalDecision {
  return Object.hasOwn(DECISION_WORDS, value);
}

function PendingCard({ agent, request }: { agent: AgentView; request: PendingRequest }) {
  const place = `request:${request.requestId}`;
  if (request.kind === "approval") {
    const offered = (request as PendingRequest & RequestExtras).decisions;
    const decisions = offered?.length ? offered.filter((d) => isDecision(d.decision)) : DEFAULT_DECISIONS.map((decision) => ({ decision, label: DECISION_WORDS[decision] }));
    return (
      <div className="card pending" data-testid="approval-card">
        <strong>Approval requested{request.requestKind ? ` (${request.requestKind})` : ""}</strong>
        <pre>{request.detail}</pre>
        <div className="card-actions">
          {decisions.map(({ decision, label }, i) => (
            <button
              key={decision}
              type="button"
              className={i === 0 ? "primary" : ""}
              data-decision={decision}
              title={decision === "accept" ? "Accept (a)" : decision === "acceptForSession" ? "Accept for session (Shift+A)" : decision === "decline" ? "Decline (d)" : undefined}
              onClick={() => void commands.respondApproval(agent.key, request.requestId, decision as ApprovalDecision)}
            >
              {label ?? DECISION_WORDS[decision as ApprovalDecision]}
            </button>
          ))}
          <PlaceError place={place} />
        </div>
      </div>
    );
  }
  return <QuestionCard agent={agent} request={request} />;
}

/** Separates multi-select answers in the one string per question the bridge carries. */
const MULTI_SEPARATOR = ", ";

function QuestionCard({ agent, request }: { agent: AgentView; request: PendingRequest }) {
  const [answers, setAnswers] = useState<Record<string, string[]>>({});
  const [custom, setCustom] = useState<Record<string, string>>({});
  const [missing, setMissing] = useState<string[]>([]);
  const firstField = useRef<HTMLFieldSetElement>(null);
  useEffect(() => {
    focusTargets.answer = () => firstField.current?.querySelector<HTMLElement>("input, select, textarea")?.focus();
    return () => {
      focusTargets.answer = undefined;
    };
  }, []);
  const answerOf = (id: string) => [...(answers[id] ?? []), ...(custom[id]?.trim() ? [custom[id]!.trim()] : [])];
  return (
    <form
      className="card pending"
      data-testid="input-card"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        const questions = request.questions as (PendingRequest["questions"][number] & QuestionExtras)[];
        const unanswered = questions.filter((q) => q.required !== false && answerOf(q.id).length === 0).map((q) => q.id);
        setMissing(unanswered);
        if (unanswered.length) return;
        void commands.respondInput(agent.key, request.requestId, Object.fromEntries(questions.map((q) => [q.id, answerOf(q.id).join(MULTI_SEPARATOR)])));
      }}
    >
      <strong>The agent asks</strong>
      {(request.questions as (PendingRequest["questions"][number] & QuestionExtras)[]).map((question, index) => {
        const chosen = answers[question.id] ?? [];
        const isMissing = missing.includes(question.id);
        const choose = (option: string, on: boolean) =>
          setAnswers({ ...answers, [question.id]: question.multiSelect ? (on ? [...chosen, option] : chosen.filter((o) => o !== option)) : on ? [option] : [] });
        return (
          <fieldset key={question.id} ref={index === 0 ? firstField : undefined} className={`question ${isMissing ? "question-missing" : ""}`} data-testid="question" aria-invalid={isMissing}>
            <legend>
              {question.header ? <span className="question-header">{question.header}: </span> : null}
              {question.question}
              {question.required === false ? <span className="hint"> (optional)</span> : null}
            </legend>
            {question.options.map((option) => (
              <label key={option} className="check">
                <input
                  type={question.multiSelect ? "checkbox" : "radio"}
                  name={`${request.requestId}-${question.id}`}
                  checked={chosen.includes(option)}
                  onChange={(event) => choose(option, event.target.checked)}
                />
                {option}
              </label>
            ))}
            {question.options.length === 0 || question.allowCustomAnswer !== false ? (
              <input
                aria-label={question.options.length ? `Other answer to: ${question.question}` : `Answer to: ${question.question}`}
                placeholder={question.options.length ? "Other…" : "Your answer"}
                maxLength={20_000}
                value={custom[question.id] ?? ""}
                onChange={(event) => setCustom({ ...custom, [question.id]: event.target.value })}
              />
            ) : null}
            {isMissing ? (
              <span className="error" data-testid="question-missing">
                This question needs an answer.
              </span>
            ) : null}
          </fieldset>
        );
      })}
      <div className="card-actions">
        <button type="submit" className="primary" title="Answer (r focuses the first question)">
          Answer
        </button>
        <PlaceError place={`request:${request.requestId}`} />
      </div>
    </form>
  );
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

/** What was observed after a send; protocol 2 adds outcomes (queued, joined) the service may report. */
const OUTCOME_WORDS: Record<string, string> = { steered: "joined the running turn", "new-turn": "started a new turn", queued: "queued after the running turn" };

function DeliveryLine({ delivery }: { delivery: Delivery }) {
  const what = delivery.kind === "message" ? `“${delivery.text ?? ""}”` : delivery.kind;
  const observed = delivery.observed ? ` · ${OUTCOME_WORDS[delivery.observed.outcome] ?? String(delivery.observed.outcome)}` : "";
  return (
    <li className={`delivery delivery-${delivery.state}`} data-testid="delivery" data-state={delivery.state} data-outcome={delivery.observed?.outcome ?? ""}>
      <span className="delivery-what clipped" title={what}>
        {what}
      </span>{" "}
      <span className="delivery-state">{DELIVERY_LABEL[delivery.state]}</span>
      {observed}
      {delivery.reason ? <span className="delivery-reason"> · {delivery.reason}</span> : null}
      {delivery.state === "uncertain" ? (
        <button type="button" onClick={() => void commands.recheck(delivery.commandId)}>
          Check again
        </button>
      ) : null}
      <PlaceError place={`delivery:${delivery.commandId}`} />
    </li>
  );
}
