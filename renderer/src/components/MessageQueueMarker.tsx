// What became of a user message the server holds back (protocol 2): queued behind the running turn
// until it starts (then the message reads like any other), or cancelled before it started.
import type { MessageQueueState } from "../../../shared/fleet/facts";

export function queueWords(queue: MessageQueueState): string {
  if (queue.state === "cancelled") return "Cancelled before it started: the agent never got this message";
  if (queue.position === null || queue.position === 1) return "Queued: starts after the running turn";
  return `Queued: position ${queue.position}, starts after the running turn and ${queue.position - 1} queued before it`;
}

export function MessageQueueMarker({ queue }: { queue: MessageQueueState }) {
  return (
    <p className={`message-queue message-queue-${queue.state}`} data-testid="message-queue" data-queue={queue.state}>
      {queueWords(queue)}
    </p>
  );
}
