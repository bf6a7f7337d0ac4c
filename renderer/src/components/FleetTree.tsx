import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef, useState } from "react";
import type { DisplayStatus, SubagentView } from "../../../shared/fleet/types";
import { CONNECTION_ACTION_WORDS, connectionWords, projectOf, serverWords } from "../../../shared/fleet/views";
import { commands } from "../state/effects";
import { relativeTime } from "../state/format";
import type { Row } from "../state/selectors";
import { useFleet } from "../state/store";
import { Clipped, CountWords, PlaceError, StatusChip, useNow } from "./common";

/** Fixed heights per kind keep scrolling 10,000 agents cheap; machine rows take two lines so their controls always fit. */
const ROW_HEIGHT: Record<Row["kind"], number> = { environment: 62, project: 40, agent: 36, subagent: 32, older: 32 };

export function FleetTree({ rows }: { rows: Row[] }) {
  const parentRef = useRef<HTMLDivElement>(null);
  const selectedKey = useFleet((s) => s.selectedKey);
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => parentRef.current, estimateSize: (index) => ROW_HEIGHT[rows[index]!.kind], overscan: 12 });
  const now = useNow();

  useEffect(() => virtualizer.measure(), [rows, virtualizer]);
  const selectedIndex = rows.findIndex((row) => row.id === selectedKey);
  useEffect(() => {
    if (selectedIndex >= 0) virtualizer.scrollToIndex(selectedIndex, { align: "auto" });
  }, [selectedIndex, virtualizer]);

  return (
    <div ref={parentRef} className="tree" role="tree" aria-label="Fleet" data-testid="fleet-tree" tabIndex={-1}>
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {virtualizer.getVirtualItems().map((item) => {
          const row = rows[item.index]!;
          return (
            <div key={row.id} className="tree-row-slot" style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT[row.kind] }}>
              {row.kind === "environment" ? (
                <EnvironmentRow row={row} now={now} />
              ) : row.kind === "project" ? (
                <ProjectRow row={row} />
              ) : row.kind === "agent" ? (
                <AgentRow row={row} selected={row.id === selectedKey} now={now} />
              ) : row.kind === "older" ? (
                <OlderRow row={row} />
              ) : (
                <SubagentRow subagent={row.subagent} depth={row.depth} />
              )}
            </div>
          );
        })}
      </div>
    </div>
  );
}

function EnvironmentRow({ row, now }: { row: Extract<Row, { kind: "environment" }>; now: number }) {
  const { env } = row;
  const collapsed = useFleet((s) => s.collapsed.has(row.id));
  const [renaming, setRenaming] = useState(false);
  const [confirmingRemove, setConfirmingRemove] = useState(false);
  const connection = row.unknown ? { words: "unknown — T3 Fleet's service is not reachable", action: null } : connectionWords(env.connection, now);
  const phase = row.unknown ? "unknown" : env.connection.phase;
  const place = `env:${env.environmentId}`;
  return (
    <div className={`env-row ${phase === "online" ? "" : "env-down"}`} role="treeitem" aria-level={1} aria-expanded={!collapsed} data-testid="env-row" data-environment={env.environmentId} data-phase={phase}>
      <div className="env-line">
        <button type="button" className="twisty" aria-label={collapsed ? "Expand" : "Collapse"} onClick={() => useFleet.getState().toggleCollapsed(row.id)}>
          {collapsed ? "▸" : "▾"}
        </button>
        {renaming ? (
          <form
            className="inline-form"
            onSubmit={(event) => {
              event.preventDefault();
              const label = new FormData(event.currentTarget).get("label");
              if (typeof label === "string" && label.trim()) void commands.renameEnvironment(env.environmentId, label.trim());
              setRenaming(false);
            }}
          >
            <input name="label" aria-label="Machine name" defaultValue={env.label} maxLength={200} autoFocus onKeyDown={(event) => event.key === "Escape" && (event.stopPropagation(), setRenaming(false))} />
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
            className="env-fix"
            data-testid="env-fix"
            onClick={() => (connection.action === "pair" ? commands.openPairing(env.environmentId, env.baseUrl) : void commands.retryEnvironment(env.environmentId))}
          >
            {CONNECTION_ACTION_WORDS[connection.action]}
          </button>
        ) : null}
      </div>
      <div className="env-line env-line-second">
        <span className="env-facts">
          <span className="env-version" data-testid="env-version">{serverWords(env)}</span>
          {env.readOnly ? <span className="tag">read-only</span> : null}
          {env.muted ? <span className="tag">muted</span> : null}
          <CountWords counts={env.counts} />
        </span>
        <PlaceError place={place} />
        <span className="env-actions">
          {confirmingRemove ? (
            <>
              <Clipped className="confirm-text" text={`Remove ${env.label}? Its token is deleted from the keychain.`} />
              <button type="button" className="danger" onClick={() => void commands.removeEnvironment(env.environmentId)}>
                Remove
              </button>
              <button type="button" onClick={() => setConfirmingRemove(false)}>
                Keep
              </button>
            </>
          ) : (
            <>
              <button type="button" onClick={() => void commands.muteEnvironment(env.environmentId, !env.muted)}>
                {env.muted ? "Unmute" : "Mute"}
              </button>
              <button type="button" onClick={() => setRenaming(true)}>
                Rename
              </button>
              <button type="button" onClick={() => setConfirmingRemove(true)}>
                Remove
              </button>
            </>
          )}
        </span>
      </div>
    </div>
  );
}

function ProjectRow({ row }: { row: Extract<Row, { kind: "project" }> }) {
  const collapsed = useFleet((s) => s.collapsed.has(row.id));
  const where = [row.repository, row.branch ? `⎇ ${row.branch}` : null, row.env.label].filter(Boolean).join(" · ");
  return (
    <div className="project-row" role="treeitem" aria-level={1} aria-expanded={!collapsed} data-testid="project-row" data-project={row.id}>
      <button type="button" className="twisty" aria-label={collapsed ? "Expand" : "Collapse"} onClick={() => useFleet.getState().toggleCollapsed(row.id)}>
        {collapsed ? "▸" : "▾"}
      </button>
      <Clipped className="project-title" text={row.title} />
      <Clipped className="project-where" text={where} />
      <CountWords counts={row.counts} />
    </div>
  );
}

function OlderRow({ row }: { row: Extract<Row, { kind: "older" }> }) {
  return (
    <div className="older-row" role="treeitem" aria-level={2} aria-expanded={row.open} data-testid="older-row">
      <button type="button" className="link" onClick={() => useFleet.getState().toggleOlder(row.groupId)}>
        {row.open ? `Hide ${row.count} older` : `${row.count} older`}
      </button>
    </div>
  );
}

function AgentRow({ row, selected, now }: { row: Extract<Row, { kind: "agent" }>; selected: boolean; now: number }) {
  const { agent } = row;
  const grouping = useFleet((s) => s.grouping);
  const project = projectOf(agent);
  return (
    <div
      className={`agent-row ${selected ? "selected" : ""} ${agent.status === "unknown" ? "agent-unknown" : ""}`}
      role="treeitem"
      aria-level={row.depth + 1}
      aria-selected={selected}
      aria-expanded={row.childCount > 0 ? !row.collapsed : undefined}
      data-testid="agent-row"
      data-key={agent.key}
      data-status={agent.status}
      style={{ paddingLeft: 12 + Math.min(row.depth, 6) * 14 }}
      onClick={() => commands.select(agent.key)}
      onDoubleClick={() => void commands.openAgent(agent.key)}
    >
      {row.childCount > 0 ? (
        <button type="button" className="twisty" aria-label={row.collapsed ? "Expand" : "Collapse"} onClick={(event) => (event.stopPropagation(), useFleet.getState().toggleCollapsed(agent.key))}>
          {row.collapsed ? "▸" : "▾"}
        </button>
      ) : (
        <span className="twisty-space" />
      )}
      <StatusChip status={agent.status} asOf={agent.asOf} stalled={agent.stalled} />
      {agent.status === "unknown" ? (
        <span className="as-of" data-testid="as-of">
          was {agent.lastKnownStatus} · as of {relativeTime(agent.asOf, now)}
        </span>
      ) : null}
      <button type="button" className="agent-title" title={agent.title} onClick={() => void commands.openAgent(agent.key)}>
        {agent.title}
      </button>
      {agent.orphaned ? <span className="tag" title={`Parent ${agent.parentThreadId} is not visible`}>orphaned</span> : null}
      {row.rollup && row.rollup !== agent.status ? (
        <span className="rollup" data-testid="rollup" data-rollup={row.rollup}>
          children: <StatusChip status={row.rollup} />
        </span>
      ) : null}
      {agent.reason ? <Clipped className="reason" text={agent.reason} /> : null}
      {grouping === "machine" && row.depth === 1 && (project.branch || project.repository) ? <Clipped className="meta where" text={project.branch ?? project.repository ?? ""} /> : null}
      <span className="meta">
        {agent.providerInstanceId} · {agent.model}
        {agent.effort ? ` · ${agent.effort}` : ""}
      </span>
      <span className="time">{relativeTime(agent.lastActivityAt, now)}</span>
    </div>
  );
}

const SUBAGENT_CHIP: Partial<Record<SubagentView["status"], DisplayStatus>> = { pending: "starting", running: "running", waiting: "waiting", failed: "failed", interrupted: "interrupted" };

function SubagentRow({ subagent, depth }: { subagent: SubagentView; depth: number }) {
  const status: DisplayStatus = SUBAGENT_CHIP[subagent.status] ?? "ended";
  return (
    <div className="subagent-row" role="treeitem" aria-level={depth + 1} data-testid="subagent-row" style={{ paddingLeft: 12 + Math.min(depth, 6) * 14 }}>
      <span className="twisty-space" />
      <StatusChip status={status} label={`subagent ${subagent.status}`} />
      <Clipped className="agent-title" text={subagent.title ?? subagent.id} />
      <span className="meta">{subagent.kind ?? "task"} · read-only</span>
    </div>
  );
}
