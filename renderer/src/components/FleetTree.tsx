import { useVirtualizer } from "@tanstack/react-virtual";
import { ChangesTag } from "./ChangesTag";
import { useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { providerName } from "../../../shared/fleet/provider-name";
import { SUBAGENT_DISPLAY } from "../../../shared/fleet/subagents";
import { type DisplayStatus, type RollupStatus, rollupStatus, type SubagentView } from "../../../shared/fleet/types";
import { CONNECTION_ACTION_WORDS, connectionWords, projectOf, serverWords } from "../../../shared/fleet/views";
import { idWords, lastKnownWords, offlineWords } from "../../../shared/fleet/words";
import { dispatch } from "../state/dispatch";
import { clockTime, relativeTime } from "../state/format";
import type { Row } from "../state/selectors";
import { useFleet } from "../state/store";
import { Clipped, CountWords, Highlighted, PlaceError, rowDomId, StatusChip, useNow } from "./common";

/** Fixed heights per kind keep scrolling 10,000 agents cheap; machine rows take two lines so their controls always fit. */
const ROW_HEIGHT: Record<Row["kind"], number> = { environment: 62, project: 40, agent: 36, subagent: 32, older: 32 };
/**
 * In a phone-width window an agent's or subagent's row takes two lines, its title alone on the
 * first and what it changed, where and how on the second (styles/panes.css, max-width 600px): on
 * one line the metadata cut the title short (issue 40 point 7).
 */
const NARROW_ROW_HEIGHT: Record<Row["kind"], number> = { ...ROW_HEIGHT, agent: 50, subagent: 46 };
const NARROW = "(max-width: 600px)";

/** Whether the window is phone-width now, following its resizes. */
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW).matches);
  useEffect(() => {
    const query = window.matchMedia(NARROW);
    const changed = () => setNarrow(query.matches);
    query.addEventListener("change", changed);
    return () => query.removeEventListener("change", changed);
  }, []);
  return narrow;
}

/**
 * The fleet as one Tab stop (a tree widget): arrow keys move the selection (App's key handler),
 * `aria-activedescendant` names the selected row, and the controls inside rows are reached with
 * the mouse or through their commands, not by Tab.
 */
export function FleetTree({ rows, treeRef }: { rows: Row[]; treeRef?: React.RefObject<HTMLDivElement | null> }) {
  const ownRef = useRef<HTMLDivElement>(null);
  const parentRef = treeRef ?? ownRef;
  const selectedKey = useFleet((s) => s.selectedKey);
  const search = useFleet((s) => s.search);
  const heights = useNarrow() ? NARROW_ROW_HEIGHT : ROW_HEIGHT;
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parentRef.current,
    estimateSize: (index) => heights[rows[index]!.kind],
    overscan: 12,
  });
  const now = useNow();

  useEffect(() => virtualizer.measure(), [rows, heights, virtualizer]);
  const selectedIndex = rows.findIndex((row) => row.id === selectedKey);
  useEffect(() => {
    if (selectedIndex >= 0) virtualizer.scrollToIndex(selectedIndex, { align: "auto" });
  }, [selectedIndex, virtualizer]);

  return (
    <div
      ref={parentRef}
      className="tree"
      role="tree"
      aria-label="Fleet"
      data-testid="fleet-tree"
      tabIndex={0}
      aria-activedescendant={selectedIndex >= 0 ? rowDomId(selectedKey!) : undefined}
      onFocus={(event) => {
        if (event.target !== event.currentTarget || selectedIndex >= 0) return;
        const first = rows.find((row) => row.kind === "agent" && row.match);
        if (first) dispatch("agent.select", "button", { key: first.id });
      }}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {virtualizer.getVirtualItems().map((item) => {
          const row = rows[item.index]!;
          return (
            <div key={row.id} className="tree-row-slot" style={{ transform: `translateY(${item.start}px)`, height: heights[row.kind] }}>
              {row.kind === "environment" ? (
                <EnvironmentRow row={row} now={now} />
              ) : row.kind === "project" ? (
                <ProjectRow row={row} />
              ) : row.kind === "agent" ? (
                <AgentRow row={row} selected={row.id === selectedKey} now={now} search={search} />
              ) : row.kind === "older" ? (
                <OlderRow row={row} />
              ) : (
                <SubagentRow rowId={row.id} parentKey={row.parentKey} subagent={row.subagent} depth={row.depth} />
              )}
            </div>
          );
        })}
      </div>
    </div>
  );
}

function EnvironmentRow({ row, now: treeNow }: { row: Extract<Row, { kind: "environment" }>; now: number }) {
  const { env } = row;
  // "retrying in 12 s" counts down by the second while a retry is due; the tree's clock is slower.
  const retrying = env.connection.phase === "offline" || env.connection.phase === "backoff";
  const secondClock = useNow(retrying ? 1_000 : 60_000);
  const now = retrying ? secondClock : treeNow;
  const collapsed = useFleet((s) => s.collapsed.has(row.id));
  const [renaming, setRenaming] = useState(false);
  const connection = row.unknown ? { words: "unknown — T3 Fleet's service is not reachable", action: null } : connectionWords(env.connection, now);
  const phase = row.unknown ? "unknown" : env.connection.phase;
  const place = `env:${env.environmentId}`;
  return (
    <div
      id={rowDomId(row.id)}
      className={`env-row ${phase === "online" ? "" : "env-down"}`}
      role="treeitem"
      aria-level={1}
      aria-expanded={!collapsed}
      aria-selected={false}
      data-testid="env-row"
      data-environment={env.environmentId}
      data-phase={phase}
    >
      <div className="env-line">
        <button
          type="button"
          tabIndex={-1}
          className="twisty"
          aria-label={collapsed ? "Expand" : "Collapse"}
          onClick={() => dispatch("fleet.toggle", "button", { id: row.id })}
        >
          {collapsed ? "▸" : "▾"}
        </button>
        {renaming ? (
          <form
            className="inline-form"
            onSubmit={(event) => {
              event.preventDefault();
              const label = new FormData(event.currentTarget).get("label");
              if (typeof label === "string" && label.trim()) dispatch("machine.rename", "button", { environmentId: env.environmentId, label: label.trim() });
              setRenaming(false);
            }}
          >
            <input
              name="label"
              aria-label="Machine name"
              defaultValue={env.label}
              maxLength={200}
              autoFocus
              onKeyDown={(event) => event.key === "Escape" && (event.stopPropagation(), setRenaming(false))}
            />
            <button type="submit">Save</button>
          </form>
        ) : (
          <Clipped className="env-label" text={env.label} testId="env-label" />
        )}
        <span className={`phase phase-${phase}`} data-testid="env-phase" title={"error" in env.connection ? env.connection.error : undefined}>
          {connection.words}
        </span>
        {connection.action ? (
          <button
            type="button"
            tabIndex={-1}
            className="env-fix"
            data-testid="env-fix"
            onClick={() =>
              connection.action === "pair"
                ? dispatch("pairing.open", "button", { environmentId: env.environmentId, input: env.baseUrl })
                : dispatch("machine.retry", "button", { environmentId: env.environmentId })
            }
          >
            {CONNECTION_ACTION_WORDS[connection.action]}
          </button>
        ) : null}
      </div>
      <div className="env-line env-line-second">
        <span className="env-facts">
          <span className="env-version" data-testid="env-version">
            {serverWords(env)}
          </span>
          {env.readOnly ? <span className="tag">read-only</span> : null}
          {env.muted ? <span className="tag">muted</span> : null}
          <CountWords counts={env.counts} seenFailures={row.seenFailures} />
        </span>
        <PlaceError place={place} />
        <MachineMenu env={env} onRename={() => setRenaming(true)} />
      </div>
    </div>
  );
}

/**
 * A machine's actions (mute, rename, remove) behind one button, so its counts always keep their
 * room; the menu opens over the page (a portal), never clipped by the row.
 */
function MachineMenu({ env, onRename }: { env: Extract<Row, { kind: "environment" }>["env"]; onRename: () => void }) {
  // Where the button was when the menu opened (null: closed); measured on the click, never during a render.
  const [anchor, setAnchor] = useState<DOMRect | null>(null);
  const open = anchor !== null;
  // The question before removing is the store's (slices/actions.ts confirming), as every "ask first" is.
  const confirmingRemove = useFleet((s) => s.confirming?.action === "remove-machine" && s.confirming.environmentId === env.environmentId);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const close = (refocus: boolean) => {
    setAnchor(null);
    // One machine menu is open at a time: closing it drops its question, nothing removed.
    if (useFleet.getState().confirming?.action === "remove-machine") dispatch("action.cancel", "button");
    if (refocus) buttonRef.current?.focus();
  };
  useEffect(() => {
    if (!open) return;
    // Removing asks first, on its safe answer (Keep), as every destructive question does (safe-confirm.ts).
    menuRef.current?.querySelector<HTMLElement>(confirmingRemove ? '[data-testid="env-remove-keep"]' : "button")?.focus();
    const outside = (event: PointerEvent) => {
      if (!menuRef.current?.contains(event.target as Node) && !buttonRef.current?.contains(event.target as Node)) close(false);
    };
    document.addEventListener("pointerdown", outside);
    return () => document.removeEventListener("pointerdown", outside);
  }, [open, confirmingRemove]);
  return (
    <>
      <button
        ref={buttonRef}
        type="button"
        tabIndex={-1}
        className="env-menu-button"
        data-testid="env-menu"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={`Actions for ${env.label}`}
        title={`Actions for ${env.label}`}
        onClick={(event) => (open ? close(false) : setAnchor(event.currentTarget.getBoundingClientRect()))}
      >
        ⋯
      </button>
      {anchor
        ? createPortal(
            <div
              ref={menuRef}
              className="menu"
              role="menu"
              aria-label={`Actions for ${env.label}`}
              data-testid="env-menu-list"
              style={{ top: Math.min(anchor.bottom + 4, window.innerHeight - 140), right: Math.max(8, window.innerWidth - anchor.right) }}
              onKeyDown={(event) => {
                if (event.key === "Escape") {
                  event.stopPropagation();
                  close(true);
                } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
                  event.preventDefault();
                  event.stopPropagation();
                  const items = [...(menuRef.current?.querySelectorAll<HTMLElement>("button") ?? [])];
                  const at = items.indexOf(document.activeElement as HTMLElement);
                  items[(at + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length]?.focus();
                }
              }}
            >
              {confirmingRemove ? (
                <>
                  <p className="confirm-text">Remove {env.label}? Its token is deleted from the keychain.</p>
                  <button type="button" role="menuitem" className="danger" onClick={() => (dispatch("action.confirm", "button", {}), close(false))}>
                    Remove
                  </button>
                  <button type="button" role="menuitem" data-testid="env-remove-keep" onClick={() => close(true)}>
                    Keep
                  </button>
                </>
              ) : (
                <>
                  <button
                    type="button"
                    role="menuitem"
                    onClick={() => (close(true), dispatch("machine.mute", "button", { environmentId: env.environmentId, muted: !env.muted }))}
                  >
                    {env.muted ? "Unmute notifications" : "Mute notifications"}
                  </button>
                  <button type="button" role="menuitem" onClick={() => (close(false), onRename())}>
                    Rename…
                  </button>
                  <button type="button" role="menuitem" onClick={() => dispatch("machine.remove", "button", { environmentId: env.environmentId })}>
                    Remove…
                  </button>
                </>
              )}
            </div>,
            document.body,
          )
        : null}
    </>
  );
}

function ProjectRow({ row }: { row: Extract<Row, { kind: "project" }> }) {
  const collapsed = useFleet((s) => s.collapsed.has(row.id));
  // Title first; the machines next (the cross-machine merge is the point of this view); paths last.
  const where = [`on ${row.machines.join(", ")}`, row.branch ? `⎇ ${row.branch}` : null, row.repository].filter(Boolean).join(" · ");
  return (
    <div
      id={rowDomId(row.id)}
      className="project-row"
      role="treeitem"
      aria-level={1}
      aria-expanded={!collapsed}
      aria-selected={false}
      data-testid="project-row"
      data-project={row.id}
    >
      <button
        type="button"
        tabIndex={-1}
        className="twisty"
        aria-label={collapsed ? "Expand" : "Collapse"}
        onClick={() => dispatch("fleet.toggle", "button", { id: row.id })}
      >
        {collapsed ? "▸" : "▾"}
      </button>
      <Clipped className="project-title" text={row.title} />
      <Clipped className="project-where" text={where} />
      <CountWords counts={row.counts} />
      {/* Agents of a machine away are named by it, as of its last confirmation: never a bare "7 unknown". */}
      {row.away.map(({ env, agents }) => (
        <Clipped
          key={env.environmentId}
          className="project-away"
          testId="project-away"
          text={`${agents} ${row.unknown ? "unknown: T3 Fleet's service is not reachable" : `on ${offlineWords(env.label, env.connection, clockTime)}`}`}
        />
      ))}
    </div>
  );
}

function OlderRow({ row }: { row: Extract<Row, { kind: "older" }> }) {
  return (
    <div id={rowDomId(row.id)} className="older-row" role="treeitem" aria-level={2} aria-expanded={row.open} aria-selected={false} data-testid="older-row">
      <button type="button" tabIndex={-1} className="link" onClick={() => dispatch("fleet.toggle-older", "button", { groupId: row.groupId })}>
        {row.open ? `Hide ${row.count} older` : `${row.count} older`}
      </button>
    </div>
  );
}

function AgentRow({ row, selected, now, search }: { row: Extract<Row, { kind: "agent" }>; selected: boolean; now: number; search: string }) {
  const { agent } = row;
  const grouping = useFleet((s) => s.grouping);
  const machine = useFleet((s) => (grouping === "project" ? (s.environments.get(agent.environmentId)?.label ?? agent.environmentId) : null));
  const project = projectOf(agent);
  return (
    <div
      id={rowDomId(row.id)}
      className={`agent-row ${selected ? "selected" : ""} ${agent.status === "unknown" ? "agent-unknown" : ""} ${row.match ? "" : "context-row"} ${agent.acknowledged ? "acknowledged" : ""}`}
      role="treeitem"
      data-match={row.match}
      aria-level={row.depth + 1}
      aria-selected={selected}
      aria-expanded={row.childCount > 0 ? !row.collapsed : undefined}
      data-testid="agent-row"
      data-key={agent.key}
      data-status={agent.status}
      style={{ paddingLeft: 12 + Math.min(row.depth, 6) * 14 }}
      onClick={() => dispatch("agent.select", "button", { key: agent.key })}
      onDoubleClick={() => dispatch("agent.open", "button", { key: agent.key })}
    >
      {row.childCount > 0 ? (
        <button
          type="button"
          tabIndex={-1}
          className="twisty"
          aria-label={row.collapsed ? "Expand" : "Collapse"}
          onClick={(event) => (event.stopPropagation(), dispatch("fleet.toggle", "button", { id: agent.key }))}
        >
          {row.collapsed ? "▸" : "▾"}
        </button>
      ) : (
        <span className="twisty-space" />
      )}
      <StatusChip status={agent.status} asOf={agent.asOf} stalled={agent.stalled} heldUp={agent.heldUp} acknowledged={agent.acknowledged} />
      {agent.status === "unknown" ? (
        <span className="as-of" data-testid="as-of">
          was {lastKnownWords(agent)}
          <span className="as-of-time"> · as of {relativeTime(agent.asOf, now)}</span>
        </span>
      ) : null}
      <button type="button" tabIndex={-1} className="agent-title" title={agent.title} onClick={() => dispatch("agent.open", "button", { key: agent.key })}>
        <Highlighted text={agent.title} search={row.match ? search : ""} />
      </button>
      {row.match ? null : <span className="sr-only">(shown for context: it does not match)</span>}
      {agent.orphaned ? (
        <span className="tag" title={`Parent ${agent.parentThreadId} is not visible`}>
          orphaned
        </span>
      ) : null}
      {row.rollup && row.rollup !== rollupStatus(agent) ? (
        <span className="rollup" data-testid="rollup" data-rollup={row.rollup}>
          children: <RollupChip rollup={row.rollup} />
        </span>
      ) : null}
      {agent.reason ? <Clipped className="reason" text={agent.reason} /> : null}
      <ChangesTag agent={agent} />
      {grouping === "machine" && row.depth === 1 && (project.branch || project.repository) ? (
        <Clipped className="meta where" text={project.branch ?? project.repository ?? ""} />
      ) : null}
      {machine ? <Clipped className="machine-tag" text={machine} testId="agent-machine" /> : null}
      <span className="meta">
        {providerName(agent)} · {agent.model}
        {agent.effort ? ` · ${agent.effort}` : ""}
      </span>
      <span className="time">{relativeTime(agent.lastActivityAt, now)}</span>
    </div>
  );
}

/** A roll-up's chip: a stalled or held-up run keeps its own look and word. */
function RollupChip({ rollup }: { rollup: RollupStatus }) {
  if (rollup === "stalled" || rollup === "held-up") return <StatusChip status="running" stalled heldUp={rollup === "held-up"} />;
  return <StatusChip status={rollup} />;
}

/**
 * A native subagent. When the server links it to a thread of its own, clicking opens that thread;
 * otherwise nothing can open it and it reads as a plain line (no pointer, no button look).
 */
function SubagentRow({ rowId, parentKey, subagent, depth }: { rowId: string; parentKey: string; subagent: SubagentView; depth: number }) {
  const status: DisplayStatus = SUBAGENT_DISPLAY[subagent.status];
  const childKey = subagent.childThreadId ? `${parentKey.slice(0, parentKey.indexOf("/"))}/${subagent.childThreadId}` : null;
  const opens = useFleet((s) => (childKey && s.agents.has(childKey) ? childKey : null));
  return (
    <div
      id={rowDomId(rowId)}
      className={`subagent-row ${opens ? "clickable" : ""}`}
      role="treeitem"
      aria-level={depth + 1}
      aria-selected={false}
      data-testid="subagent-row"
      data-opens={opens ?? ""}
      title={opens ? "Open this subagent's thread" : "A subagent inside its parent's run: its work shows in the parent's transcript"}
      style={{ paddingLeft: 12 + Math.min(depth, 6) * 14 }}
      onClick={opens ? () => dispatch("agent.open", "button", { key: opens }) : undefined}
    >
      <span className="twisty-space" />
      <StatusChip status={status} label={`subagent ${subagent.status}`} />
      <Clipped className="subagent-title" text={subagent.title ?? subagent.id} />
      {subagent.reason ? <Clipped className="reason" text={subagent.reason} /> : null}
      <span className="meta" data-testid="subagent-kind">
        {subagent.kind ? idWords(subagent.kind) : "task"} · read-only
      </span>
    </div>
  );
}
