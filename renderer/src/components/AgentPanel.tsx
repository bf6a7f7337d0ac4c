import { useEffect, useRef, useState } from "react";
import type { Delivery } from "../../../shared/fleet/delivery";
import type { AgentView, PendingRequest } from "../../../shared/fleet/types";
import { acknowledgeable, projectOf } from "../../../shared/fleet/views";
import { deliveryOutcomeWords, deliveryStateWords } from "../../../shared/fleet/words";
import type { ApprovalDecision, Question, QuestionAnswers } from "../../../shared/fleet/facts";
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
        {agent.capabilities.stop ? <CommandButton id="agent.stop" testId="stop" label="Stop session" /> : null}
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
        <Transcript key={agent.key} detail={detail} offline={env?.connection.phase !== "online"} />
      </div>
      <Deliveries agentKey={agent.key} />
      <Composer agent={agent} />
    </section>
  );
}

function PendingCard({ agent, request }: { agent: AgentView; request: PendingRequest }) {
  const place = `request:${request.requestId}`;
  if (request.kind === "approval") {
    const keyOf: Partial<Record<ApprovalDecision, string>> = { accept: "a", acceptForSession: "Shift+A", decline: "d" };
    return (
      <div className="card pending" data-testid="approval-card">
        <strong>Approval requested{request.requestKind ? ` (${request.requestKind})` : ""}</strong>
        <pre>{request.detail}</pre>
        <div className="card-actions">
          {/* Every decision the request offers, in the server's order. */}
          {request.decisions.map((option, index) => (
            <button
              key={option.decision}
              type="button"
              className={index === 0 ? "primary" : undefined}
              data-decision={option.decision}
              title={[option.warning, keyOf[option.decision] ? `key ${keyOf[option.decision]}` : null].filter(Boolean).join(" · ") || undefined}
              onClick={() => void commands.respondApproval(agent.key, request.requestId, option.decision)}
            >
              {option.label}
            </button>
          ))}
          <PlaceError place={place} />
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
  return <QuestionCard agent={agent} request={request} />;
}

function QuestionCard({ agent, request }: { agent: AgentView; request: Extract<PendingRequest, { kind: "input" }> }) {
  const [chosen, setChosen] = useState<Record<string, string[]>>({});
  const [free, setFree] = useState<Record<string, string>>({});
  const [missing, setMissing] = useState<string[]>([]);
  const firstField = useRef<HTMLFieldSetElement>(null);
  useEffect(() => {
    focusTargets.answer = () => firstField.current?.querySelector<HTMLElement>("input, select, textarea")?.focus();
    return () => {
      focusTargets.answer = undefined;
    };
  }, []);
  const answerOf = (question: Question): string[] => [...(chosen[question.id] ?? []), ...(free[question.id]?.trim() ? [free[question.id]!.trim()] : [])];
  return (
    <form
      className="card pending"
      data-testid="input-card"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        // Required questions are enforced here, before anything is sent.
        const unanswered = request.questions.filter((question) => question.required && answerOf(question).length === 0).map((question) => question.id);
        setMissing(unanswered);
        if (unanswered.length) return;
        const answers: QuestionAnswers = {};
        for (const question of request.questions) {
          const answer = answerOf(question);
          if (answer.length) answers[question.id] = question.multiSelect ? answer : answer[0]!;
        }
        void commands.respondInput(agent.key, request.requestId, answers);
      }}
    >
      <strong>The agent asks</strong>
      {request.questions.map((question, index) => {
        const picked = chosen[question.id] ?? [];
        const isMissing = missing.includes(question.id);
        const choose = (value: string, on: boolean) =>
          setChosen({ ...chosen, [question.id]: question.multiSelect ? (on ? [...picked, value] : picked.filter((v) => v !== value)) : on ? [value] : [] });
        return (
          <fieldset key={question.id} ref={index === 0 ? firstField : undefined} className={`question ${isMissing ? "question-missing" : ""}`} data-testid="question" aria-invalid={isMissing}>
            <legend>
              {question.header ? <span className="question-header">{question.header}: </span> : null}
              {question.question}
              {question.required ? null : <span className="hint"> (optional)</span>}
              {question.multiSelect ? <span className="hint"> (choose any)</span> : null}
            </legend>
            {question.options.map((option) => (
              <label key={option.value} className="check" title={option.description ?? undefined}>
                <input
                  type={question.multiSelect ? "checkbox" : "radio"}
                  name={`${request.requestId}-${question.id}`}
                  checked={picked.includes(option.value)}
                  onChange={(event) => choose(option.value, event.target.checked)}
                />
                {option.label}
              </label>
            ))}
            {question.allowsFreeText || question.options.length === 0 ? (
              <input
                aria-label={question.options.length ? `Other answer to: ${question.question}` : `Answer to: ${question.question}`}
                placeholder={question.options.length ? "Other…" : "Your answer"}
                maxLength={ANSWER_MAX_CHARS}
                value={free[question.id] ?? ""}
                onChange={(event) => setFree({ ...free, [question.id]: event.target.value })}
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

/** The longest answer the bridge accepts (shared/bridge/contract.ts agent.respondInput). */
const ANSWER_MAX_CHARS = 20_000;

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
  const outcome = deliveryOutcomeWords(delivery);
  const observed = outcome ? ` · ${outcome}` : "";
  return (
    <li className={`delivery delivery-${delivery.state}`} data-testid="delivery" data-state={delivery.state} data-outcome={delivery.observed?.outcome ?? ""}>
      <span className="delivery-what clipped" title={what}>
        {what}
      </span>{" "}
      <span className="delivery-state">{deliveryStateWords(delivery, DELIVERY_LABEL)}</span>
      {observed}
      {delivery.reason ? <span className="delivery-reason"> · {delivery.reason}</span> : null}
      {delivery.observed?.outcome === "queued" && delivery.state !== "answered" ? (
        <button type="button" data-testid="cancel-queued" onClick={() => void commands.cancelQueued(delivery.commandId)}>
          Cancel
        </button>
      ) : null}
      {delivery.state === "uncertain" ? (
        <button type="button" onClick={() => void commands.recheck(delivery.commandId)}>
          Check again
        </button>
      ) : null}
      <PlaceError place={`delivery:${delivery.commandId}`} />
    </li>
  );
}
