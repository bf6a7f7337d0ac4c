// What the fleet says of a send in its own words (a server's refusal keeps the server's words).
/** What a refusal says when the refusing side gave no words: never a refusal without a reason. */
export const UNEXPLAINED_REFUSAL = "The server refused it without saying why. Check the agent in T3, then send again.";

/** A message restored after a restart, before its thread could be checked. */
export const RESTART_CHECKING =
  "T3 Fleet restarted before the server confirmed this message. It checks the agent's thread once the machine is back online; it never sends it again on its own.";
/** A restored message its thread does not show: the user may send it again, once. */
export const RESTART_NOT_FOUND =
  "T3 Fleet restarted before the server confirmed this message, and the agent's thread does not show it. Send again sends it once (T3 ignores it if it arrived after all).";
/**
 * A message that was waiting for its machine to connect when T3 Fleet stopped: it never left, so
 * it comes back held, for the user to send or discard (never sent on its own).
 */
export const RESTART_BEFORE_SENDING = "Not sent: T3 Fleet restarted while this message waited for its machine to connect. Send now sends it once.";
/** The same, after the one "Send again" was used. */
export const RESTART_NOT_FOUND_AFTER_RESEND =
  "T3 Fleet restarted again before the server confirmed the message you sent again, and the agent's thread does not show it. Type it again if it is still needed.";
/** A message whose thread left its environment (archived or deleted) after it showed there, before an answer. */
export const THREAD_LEFT_AFTER_DELIVERY = "The thread was archived or deleted before the agent answered.";
/** One T3 had accepted but did not yet show when its thread left. */
export const THREAD_LEFT_AFTER_ACCEPT = "T3 accepted it; the thread was then archived or deleted before the message showed in it.";
/** One whose arrival was not confirmed when its thread left: nothing can check it any more. */
export const THREAD_LEFT_UNCONFIRMED = "The thread was archived or deleted before the message was confirmed, so whether it arrived cannot be checked.";
/** An answer to a request T3 recorded resolved with another decision (someone answered first, in T3 or another window). */
export function answeredOtherwise(decision: string): string {
  return `T3 recorded another answer to this request first (${decision}); yours did not reach the agent.`;
}
/** An answer whose request's turn ended with nothing recorded of it: no later event can tell. */
export const NO_RECORD_OF_ANSWER = "The turn ended without T3 recording whether the agent took your answer. Check the agent in T3.";
