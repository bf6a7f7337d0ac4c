// The open agent's detail as its transcript renders it (issue 44): a token that only grows the reply
// streaming at the end is not a change here, since that reply follows the store on its own
// (components/StreamingReply.tsx); so a token renders neither the transcript nor its list.
import { useCallback, useRef } from "react";
import type { AgentDetail } from "../../../shared/bridge/contract";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import { useFleet } from "./store";

/** Fields of a streaming message a token changes: its text and when it was last updated. */
const TOKEN_FIELDS = new Set(["text", "updatedAt"]);

function sameButText(a: TranscriptItem, b: TranscriptItem): boolean {
  if (a.type !== "message" || b.type !== "message" || !a.streaming || !b.streaming) return false;
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const field of fields) if (!TOKEN_FIELDS.has(field) && a[field as keyof typeof a] !== b[field as keyof typeof b]) return false;
  return true;
}

/**
 * Whether `next` differs from `previous` only in the text of the message streaming at the end of
 * both (the same message, streaming in both): every other item the same object, every other field
 * the same.
 */
export function sameButStreamingText(previous: AgentDetail | undefined, next: AgentDetail | undefined): boolean {
  if (previous === next) return true;
  if (!previous || !next) return false;
  if (previous.key !== next.key || previous.loaded !== next.loaded || previous.error !== next.error || previous.earlier !== next.earlier) return false;
  const count = previous.items.length;
  if (count === 0 || next.items.length !== count) return false;
  for (let index = 0; index < count - 1; index++) if (previous.items[index] !== next.items[index]) return false;
  const before = previous.items[count - 1]!;
  const after = next.items[count - 1]!;
  return before === after || sameButText(before, after);
}

/** The agent's detail, kept as it was while only its streaming reply's text changes. */
export function useTranscriptDetail(agentKey: string): AgentDetail | undefined {
  const kept = useRef<AgentDetail | undefined>(undefined);
  const select = useCallback(
    (state: { details: ReadonlyMap<string, AgentDetail> }) => {
      const next = state.details.get(agentKey);
      if (!sameButStreamingText(kept.current, next)) kept.current = next;
      return kept.current;
    },
    [agentKey],
  );
  return useFleet(select);
}
