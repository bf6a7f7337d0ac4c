// The cards for what an agent asks of the user: an approval with its decisions, or questions to answer.
import { INPUT_LIMITS } from "../../../shared/bridge/contract";
import { useEffect, useId, useRef, useState } from "react";
import type { AgentView, PendingRequest } from "../../../shared/fleet/types";
import { projectOf } from "../../../shared/fleet/views";
import { idWords } from "../../../shared/fleet/words";
import type { ApprovalDecision, Question, QuestionAnswers } from "../../../shared/fleet/facts";
import { dispatch } from "../state/dispatch";
import { focusTargets } from "../state/focus";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";
import { ConfirmAction } from "./ConfirmAction";

export function PendingCard({ agent, request, offline }: { agent: AgentView; request: PendingRequest; offline: boolean }) {
  const place = `request:${request.requestId}`;
  const confirming = useFleet((s) => s.confirming);
  const finalId = useId();
  if (request.kind === "approval") {
    // A decision that stops work waits here for its confirm, which opens on "Keep it" (agentCommands.respondApproval).
    const confirmDecision = confirming?.action === "decide" && confirming.requestId === request.requestId ? confirming : null;
    const confirmOption = confirmDecision && request.decisions.find((option) => option.decision === confirmDecision.decision);
    const keyOf: Partial<Record<ApprovalDecision, string>> = { accept: "a", acceptForSession: "Shift+A", decline: "d" };
    const project = projectOf(agent);
    return (
      <div className="card pending" data-testid="approval-card" role="group" aria-label="Approval requested" aria-describedby={finalId}>
        <div className="approval-heading">
          <strong>Approve {request.requestKind ? `this ${idWords(request.requestKind)}` : "this request"}?</strong>
          {/* Said before anything is sent; short enough to share the heading's line on a phone. */}
          <span className="hint" id={finalId} data-testid="decision-final" title="A decision goes to T3 at once and T3 cannot take it back.">
            Final once sent
          </span>
        </div>
        <dl className="approval-facts">
          {/* Protocol 2 gives the agent's question, not the command: it is named as what it is. */}
          <dt>{request.asked ? "It asks" : request.requestKind === "command" ? "Command" : "What"}</dt>
          <dd>
            <pre data-testid="approval-command">{request.detail}</pre>
          </dd>
          <dt>In</dt>
          <dd data-testid="approval-folder">{project.repository ?? agent.workspaceRoot ?? "the agent's project folder (the server did not say which)"}</dd>
          {agent.reason && agent.reason !== request.detail ? (
            <>
              <dt>Why</dt>
              <dd data-testid="approval-reason">{agent.reason}</dd>
            </>
          ) : null}
        </dl>
        <div className="card-actions">
          {confirmDecision ? (
            <ConfirmAction
              pending={confirmDecision}
              question={`${confirmOption?.label ?? "Deny and stop"}? The command is not run and the agent's turn ends.`}
              confirmLabel={confirmOption?.label ?? "Deny and stop"}
              testId="decision-confirm"
            />
          ) : null}
          {/* Every decision the request offers, in the server's order; the keys work while this card is on screen. */}
          {confirmDecision
            ? null
            : request.decisions.map((option, index) => (
                <button
                  key={option.decision}
                  type="button"
                  className={index === 0 ? "primary" : undefined}
                  data-decision={option.decision}
                  title={offline ? "Its machine is not online: this can be answered once it is back" : (option.warning ?? undefined)}
                  disabled={offline}
                  aria-keyshortcuts={keyOf[option.decision]}
                  onClick={() => dispatch("agent.decide", "button", { key: agent.key, requestId: request.requestId, decision: option.decision })}
                >
                  {option.label}
                  {keyOf[option.decision] ? <kbd aria-hidden="true">{keyOf[option.decision]}</kbd> : null}
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
  return <QuestionCard agent={agent} request={request} offline={offline} />;
}

function QuestionCard({ agent, request, offline }: { agent: AgentView; request: Extract<PendingRequest, { kind: "input" }>; offline: boolean }) {
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
        dispatch("agent.respond", "button", { key: agent.key, requestId: request.requestId, answers });
      }}
    >
      <strong>The agent asks</strong>
      {request.questions.map((question, index) => {
        const picked = chosen[question.id] ?? [];
        const isMissing = missing.includes(question.id);
        const choose = (value: string, on: boolean) =>
          setChosen({ ...chosen, [question.id]: question.multiSelect ? (on ? [...picked, value] : picked.filter((v) => v !== value)) : on ? [value] : [] });
        return (
          <fieldset
            key={question.id}
            ref={index === 0 ? firstField : undefined}
            className={`question ${isMissing ? "question-missing" : ""}`}
            data-testid="question"
            aria-invalid={isMissing}
          >
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
                maxLength={INPUT_LIMITS.answer}
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
        <button
          type="submit"
          className="primary"
          disabled={offline}
          title={offline ? "Its machine is not online: this can be answered once it is back" : "Send these answers to the agent (r focuses the first question)"}
        >
          Answer
          <kbd aria-hidden="true">Enter</kbd>
        </button>
        <PlaceError place={`request:${request.requestId}`} />
      </div>
    </form>
  );
}
