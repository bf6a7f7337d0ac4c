// Two detail deltas of one open agent as one (shared/bridge/paced-feed.ts holds a page's deltas while
// it has not taken the last batch): applying the merged delta gives what applying both in order gives.
import type { TranscriptItem } from "../fleet/facts";
import type { AgentDetailDelta, MessageAppend } from "./contract";

export function mergeDetailDeltas(first: AgentDetailDelta, second: AgentDetailDelta): AgentDetailDelta {
  // Items by id in the order they first appeared; appends for messages the page already has.
  const items = new Map<string, TranscriptItem>(first.items.map((item) => [item.id, item]));
  const appends = new Map<string, MessageAppend>();
  const append = (entry: MessageAppend) => {
    const item = items.get(entry.id);
    if (item) {
      // A message this delta carries whole takes the text into itself.
      if (item.type === "message") items.set(entry.id, { ...item, text: item.text + entry.text, streaming: entry.streaming, updatedAt: entry.updatedAt });
      return;
    }
    const earlier = appends.get(entry.id);
    appends.set(entry.id, earlier ? { ...entry, text: earlier.text + entry.text } : entry);
  };
  for (const entry of first.appended ?? []) append(entry);
  for (const item of second.items) {
    // The whole item replaces what was appended to it before.
    appends.delete(item.id);
    items.set(item.id, item);
  }
  for (const entry of second.appended ?? []) append(entry);
  return {
    key: second.key,
    items: [...items.values()],
    ...(appends.size > 0 && { appended: [...appends.values()] }),
    loaded: second.loaded,
    error: second.error,
  };
}
