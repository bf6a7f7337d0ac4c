import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef, useState } from "react";
import type { DisplayStatus, SubagentView } from "../../../shared/fleet/types";
import { commands } from "../state/effects";
import { phaseText, relativeTime } from "../state/format";
import type { Row } from "../state/selectors";
import { useFleet } from "../state/store";
import { StatusChip, useNow } from "./common";

/** One line per row keeps scrolling 10,000 agents cheap; measured sizes are not needed. */
const ROW_HEIGHT = 36;

export function FleetTree({ rows }: { rows: Row[] }) {
  const parentRef = useRef<HTMLDivElement>(null);
  const selectedKey = useFleet((s) => s.selectedKey);
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => parentRef.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const now = useNow();

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
            <div key={row.id} className="tree-row-slot" style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}>
              {row.kind === "environment" ? (
                <EnvironmentRow row={row} now={now} />
              ) : row.kind === "agent" ? (
                <AgentRow row={row} selected={row.id === selectedKey} now={now} />
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

function Counts({ counts }: { counts: Partial<Record<DisplayStatus, number>> }) {
  const entries = Object.entries(counts) as [DisplayStatus, number][];
  return (
    <span className="counts">
      {entries.map(([status, count]) => (
        <span key={status} className={`count count-${status}`} data-testid={`count-${status}`}>
          {count} {status}
        </span>
      ))}
    </span>
  );
}

function EnvironmentRow({ row, now }: { row: Extract<Row, { kind: "environment" }>; now: number }) {
  const { env } = row;
  const collapsed = useFleet((s) => s.collapsed.has(row.id));
  const [renaming, setRenaming] = useState(false);
  const [confirmingRemove, setConfirmingRemove] = useState(false);
  const online = env.connection.phase === "online";
  return (
    <div className={`env-row ${online ? "" : "env-down"}`} role="treeitem" aria-level={1} aria-expanded={!collapsed} data-testid="env-row" data-environment={env.environmentId} data-phase={env.connection.phase}>
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
          <input name="label" aria-label="Machine name" defaultValue={env.label} autoFocus onKeyDown={(event) => event.key === "Escape" && (event.stopPropagation(), setRenaming(false))} />
          <button type="submit">Save</button>
        </form>
      ) : (
        <span className="env-label">{env.label}</span>
      )}
      <span className={`phase phase-${env.connection.phase}`} data-testid="env-phase" title={"error" in env.connection ? env.connection.error : undefined}>
        {phaseText(env.connection, now)}
      </span>
      <span className="env-version">T3 {env.serverVersion ?? "?"}</span>
      {env.readOnly ? <span className="tag">read-only</span> : null}
      {env.muted ? <span className="tag">muted</span> : null}
      <Counts counts={env.counts} />
      <span className="env-actions">
        {confirmingRemove ? (
          <>
            <span className="confirm-text">Remove {env.label}? Its token is deleted from the keychain.</span>
            <button type="button" className="danger" onClick={() => void commands.removeEnvironment(env.environmentId)}>
              Remove
            </button>
            <button type="button" onClick={() => setConfirmingRemove(false)}>
              Keep
            </button>
          </>
        ) : (
          <>
            {env.connection.phase === "unauthorized" || env.connection.phase === "incompatible" ? (
              <button type="button" onClick={() => commands.openPairing(env.environmentId, env.baseUrl)}>
                Pair again
              </button>
            ) : null}
            {!online ? (
              <button type="button" onClick={() => void commands.retryEnvironment(env.environmentId)}>
                Retry now
              </button>
            ) : null}
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
  );
}

function AgentRow({ row, selected, now }: { row: Extract<Row, { kind: "agent" }>; selected: boolean; now: number }) {
  const { agent } = row;
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
      style={{ paddingLeft: 12 + row.depth * 18 }}
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
      <button type="button" className="agent-title" onClick={() => void commands.openAgent(agent.key)}>
        {agent.title}
      </button>
      {agent.orphaned ? <span className="tag" title={`Parent ${agent.parentThreadId} is not visible`}>orphaned</span> : null}
      {row.rollup && row.rollup !== agent.status ? (
        <span className="rollup" data-testid="rollup" data-rollup={row.rollup}>
          children: <StatusChip status={row.rollup} />
        </span>
      ) : null}
      {agent.reason ? <span className="reason" title={agent.reason}>{agent.reason}</span> : null}
      <span className="meta">
        {agent.providerInstanceId} · {agent.model}
        {agent.effort ? ` · ${agent.effort}` : ""}
      </span>
      <span className="time">{relativeTime(agent.updatedAt, now)}</span>
    </div>
  );
}

function SubagentRow({ subagent, depth }: { subagent: SubagentView; depth: number }) {
  const status: DisplayStatus = subagent.status === "running" ? "running" : subagent.status === "failed" ? "failed" : "ended";
  return (
    <div className="subagent-row" role="treeitem" aria-level={depth + 1} data-testid="subagent-row" style={{ paddingLeft: 12 + depth * 18 }}>
      <span className="twisty-space" />
      <StatusChip status={status} label={`subagent ${subagent.status}`} />
      <span className="agent-title">{subagent.title ?? subagent.id}</span>
      <span className="meta">{subagent.kind ?? "task"} · read-only</span>
    </div>
  );
}
