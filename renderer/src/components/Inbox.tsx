// The inbox: only what needs the user, across machines, most urgent first (shared/fleet/needs.ts). One Tab stop (a
// listbox with aria-activedescendant); ↑/↓ move, Enter opens, and after an answer the next item
// opens (renderer/src/state/inbox.ts advanceInbox).
import { useEffect, useRef } from "react";
import type { AgentView } from "../../../shared/fleet/types";
import { waitingSince } from "../../../shared/fleet/views";
import { idWords, lastKnownWords, plainText, stalledWords } from "../../../shared/fleet/words";
import { finishedWords } from "../../../shared/fleet/changes-usage";
import { asOfStatus, needClass } from "../../../shared/fleet/needs";
import { failedSubagentWords } from "../../../shared/fleet/subagents";
import { ChangesTag } from "./ChangesTag";
import { dispatch } from "../state/dispatch";
import { clockTime, relativeTime } from "../state/format";
import { useFleet } from "../state/store";
import { ActionButton } from "./ActionButton";
import { Clipped, Highlighted, rowDomId, StatusChip, useNow } from "./common";

/** What the agent needs from the user, in a few words; while its machine (named) is away, as of when it was last confirmed. */
export function needWords(agent: AgentView, now = Date.now(), machine = "its machine"): string {
  if (agent.status !== "unknown") return currentNeedWords(agent, now);
  const asOf = agent.asOf ? Date.parse(agent.asOf) : NaN;
  return `${machine} offline ${Number.isFinite(asOf) ? `as of ${clockTime(asOf)}` : "since before this window opened"}: ${currentNeedWords(agent, now)}`;
}

function currentNeedWords(agent: AgentView, now: number): string {
  const request = agent.pending[0];
  if (request?.kind === "approval")
    return `approve ${request.requestKind ? `a ${idWords(request.requestKind)}` : "a request"}: ${request.asked ? plainText(request.detail) : request.detail}`;
  if (request?.kind === "input") return `answer: ${request.questions[0]?.question ?? request.detail}`;
  if (request?.kind === "auth-refresh") return "the provider must log in again";
  // Its own failure first; else a native subagent's, named (shared/fleet/subagents.ts).
  const subagentFailure = failedSubagentWords(agent);
  if (subagentFailure && asOfStatus(agent) !== "failed" && asOfStatus(agent) !== "stuck") return subagentFailure;
  if (agent.heldUp) return `held up: ${agent.reason ?? "the provider is waiting"}`;
  if (agent.stalled) return stalledWords(agent, now);
  // Listed for its changes waiting for review (shared/fleet/needs.ts awaitsReview).
  if (needClass(agent) === "review") return `${finishedWords(agent)} · e marks them reviewed`;
  return agent.reason ?? lastKnownWords(agent);
}

export function InboxList({
  items,
  snoozed,
  hidden,
  paneRef,
}: {
  items: AgentView[];
  snoozed: number;
  /** What needs the user but the machine, provider or search filters hide (still counted). */
  hidden: number;
  paneRef: React.RefObject<HTMLDivElement | null>;
}) {
  const selectedKey = useFleet((s) => s.selectedKey);
  const openKey = useFleet((s) => s.openKey);
  const search = useFleet((s) => s.search);
  const environments = useFleet((s) => s.environments);
  const now = useNow();
  const listRef = useRef<HTMLDivElement>(null);
  const current = items.findIndex((agent) => agent.key === (openKey ?? selectedKey));
  const filters = useFleet((s) => s.filters);
  const hiddenBy = search ? (filters.environmentId || filters.provider ? "the search and filters" : "the search") : "the filters";
  useEffect(() => {
    if (current >= 0) document.getElementById(rowDomId(items[current]!.key))?.scrollIntoView({ block: "nearest" });
  }, [current, items]);
  return (
    <section className="inbox" aria-label="Inbox" data-testid="inbox">
      <header className="inbox-header">
        <strong data-testid="inbox-position">
          {items.length === 0
            ? hidden
              ? `${hidden} hidden by ${hiddenBy}`
              : "Nothing needs you"
            : current >= 0
              ? `${current + 1} of ${items.length}`
              : hidden
                ? `${items.length} of ${items.length + hidden} shown`
                : `${items.length} ${items.length === 1 ? "needs" : "need"} you`}
        </strong>
        {/* What is hidden is said once: by the position when nothing is shown, else here. */}
        <span className="hint" data-testid="inbox-hint">
          most urgent first{hidden && items.length > 0 ? ` · ${hidden} hidden by ${hiddenBy}` : ""}
        </span>
        <span className="inbox-lists">
          {snoozed ? (
            <ActionButton
              id="inbox.snoozed"
              testId="open-snoozed"
              label={`${snoozed} snoozed`}
              className="link-button"
              title="Show the snoozed agents, when each wakes, and wake them"
            />
          ) : null}
          <ActionButton
            id="inbox.handled"
            testId="open-handled"
            label="Handled today"
            className="link-button"
            title="What you approved, answered, acknowledged, snoozed or stopped since midnight"
          />
        </span>
      </header>
      {items.length === 0 ? (
        // Focus lands here when the last item is handled (state/focus.ts keepFocusOffBody): the list, even empty.
        <div
          ref={(element) => {
            paneRef.current = element;
          }}
          className="empty"
          data-testid="inbox-empty"
          tabIndex={-1}
        >
          <p>
            {search
              ? `Nothing that needs you matches “${search}”.`
              : hidden
                ? `Nothing that needs you matches these filters; ${hidden} more ${hidden === 1 ? "needs" : "need"} you elsewhere.`
                : "You are all caught up: no agent waits for you."}
          </p>
          {search || hidden ? (
            <button type="button" onClick={() => dispatch("fleet.clear-filters", "button")}>
              {search ? "Clear the search" : "Clear the filters"}
            </button>
          ) : (
            <button type="button" onClick={() => dispatch("view.set", "button", { view: "fleet" })}>
              Show the whole fleet
            </button>
          )}
        </div>
      ) : (
        <div
          ref={(element) => {
            listRef.current = element;
            paneRef.current = element;
          }}
          className="inbox-list"
          role="listbox"
          aria-label="Agents that need you, most urgent first"
          tabIndex={0}
          aria-activedescendant={current >= 0 ? rowDomId(items[current]!.key) : undefined}
          onFocus={(event) => {
            if (event.target === event.currentTarget && current < 0 && items[0]) dispatch("agent.select", "button", { key: items[0].key });
          }}
        >
          {items.map((agent, index) => {
            const env = environments.get(agent.environmentId);
            return (
              <div
                key={agent.key}
                id={rowDomId(agent.key)}
                role="option"
                aria-selected={index === current}
                aria-posinset={index + 1}
                aria-setsize={items.length}
                className={`inbox-row ${index === current ? "selected" : ""} ${agent.status === "unknown" ? "agent-unknown" : ""}`}
                data-testid="inbox-row"
                data-key={agent.key}
                data-status={agent.status}
                onClick={() => dispatch("agent.open", "button", { key: agent.key })}
              >
                <div className="inbox-line">
                  <StatusChip status={agent.status} asOf={agent.asOf} stalled={agent.stalled} heldUp={agent.heldUp} />
                  <span className="inbox-title">
                    <Highlighted text={agent.title} search={search} />
                  </span>
                  <span className="time">{relativeTime(waitingSince(agent), now)}</span>
                </div>
                <div className="inbox-line inbox-second">
                  <Clipped className="inbox-need" text={needWords(agent, now, env?.label ?? agent.environmentId)} />
                  <Clipped className="inbox-where" text={`${env?.label ?? agent.environmentId} · ${agent.projectTitle || agent.projectId}`} />
                  <ChangesTag agent={agent} />
                </div>
              </div>
            );
          })}
        </div>
      )}
    </section>
  );
}
