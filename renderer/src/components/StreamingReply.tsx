// The reply an open agent is streaming, at the end of its transcript (issue 44). It follows the
// store on its own: the transcript around it does not render for its tokens (state/open-detail.ts).
// A token that adds plain words after what was rendered is shown as text in the growing paragraph's
// live-words element (live-words.ts): no render, no parse, only the text node and the frame's layout
// and paint. Anything else (markdown, a new line, a new paragraph, a reply replaced) renders the
// reply again with its whole text, before the same frame paints.
import { useCallback, useLayoutEffect, useMemo, useRef, useState } from "react";
import { flushSync } from "react-dom";
import { Folded } from "./Markdown";
import { liveWords } from "./live-words";
import { type LiveWords, StreamingMarkdown } from "./StreamingMarkdown";
import { type FleetState, useFleet } from "../state/store";

/** The text of the reply `id` while it is the agent's streaming reply; undefined once it is not. */
function streamingText(state: FleetState, agentKey: string, id: string): string | undefined {
  const last = state.details.get(agentKey)?.items.at(-1);
  return last?.type === "message" && last.id === id && last.streaming ? last.text : undefined;
}

/** `foldLines`: a reply longer than this many lines folds as a whole (Transcript.tsx). */
export function StreamingReply({ agentKey, id, foldLines }: { agentKey: string; id: string; foldLines: number }) {
  const [rendered, setRendered] = useState(() => streamingText(useFleet.getState(), agentKey, id) ?? "");
  // What the page shows: the text last rendered (set once it is committed), then the live words.
  const shown = useRef(rendered);
  const added = useRef("");
  const words = useRef<HTMLSpanElement>(null);
  /** Shows the reply's current text: as live words where it may, else by rendering it, through `run`. */
  const follow = useCallback(
    (run: (update: () => void) => void) => {
      const text = streamingText(useFleet.getState(), agentKey, id);
      if (text === undefined) return; // it ended or went: the transcript renders it as it is now
      const element = words.current;
      const live = element ? liveWords(shown.current, text) : null;
      if (live !== null) {
        added.current = text.slice(shown.current.length);
        // The text node changed in place: a new node would cost a style recalculation per token.
        const node = element!.firstChild;
        if (node instanceof Text) {
          if (node.data !== live) node.data = live;
        } else element!.textContent = live;
        return;
      }
      added.current = "";
      if (text !== shown.current) run(() => setRendered(text));
      else if (element?.textContent) element.textContent = "";
    },
    [agentKey, id],
  );
  // After each render, what arrived meanwhile (a render asked for by the lines settling comes a frame later).
  useLayoutEffect(() => {
    shown.current = rendered;
    follow((update) => update());
  }, [rendered, follow]);
  // Each change of the store: rendered in the frame the change came in (a store listener runs in the
  // frame callback that applied it, bridge-events.ts), as a change the whole view reads would be.
  useLayoutEffect(() => useFleet.subscribe(() => follow(flushSync)), [follow]);
  const live = useMemo<LiveWords>(() => ({ words, added: () => added.current, render: () => setRendered(shown.current + added.current) }), []);
  return (
    <Folded lines={rendered.split("\n").length} what="message" limit={foldLines}>
      <StreamingMarkdown text={rendered} live={live} />
    </Folded>
  );
}
