import { dispatch } from "../state/dispatch";
import type { Notice } from "../state/slices/ui";
import { useFleet } from "../state/store";

/** An agent's standing need (an approval, a question, a failure): what the inbox lists. */
function isNeed(notice: Notice): boolean {
  return notice.critical && Boolean(notice.intent.agentKey);
}

/**
 * Notices sit in their own strip between the filters and the fleet, never over a control: one per
 * condition, updated in place, withdrawn when the condition clears (state/notices.ts). The agents
 * that need the user share one line, the newest named and the rest counted: the inbox and the tree
 * already list each, so a need is said once on screen, not as a banner each (issue 40 point 10).
 */
export function Notices() {
  const notices = useFleet((s) => s.notices);
  const serviceNotices = useFleet((s) => s.serviceNotices);
  // Rendered empty from page load: a live region that appears with its first notice is not heard.
  const empty = notices.size === 0 && serviceNotices.length === 0;
  const needs = [...notices.values()].filter(isNeed);
  const newestNeed = needs.at(-1);
  return (
    <section className={`notices ${empty ? "notices-empty" : ""}`} aria-live="polite" aria-label="Notices" data-testid="notices">
      {serviceNotices.map((notice) => (
        <p key={notice} className="notice notice-service" role="status">
          {notice}
        </p>
      ))}
      {[...notices.values()].flatMap((notice) => {
        const need = isNeed(notice);
        // The newest need stands for all of them; every other notice is its own line.
        if (need && notice !== newestNeed) return [];
        const { condition, intent, critical, updates } = notice;
        // The hover text is exactly the shown text, so an ellipsized notice is readable in full.
        const words = [intent.title, intent.body || null, updates > 1 ? `×${updates}` : null].filter(Boolean).join(" · ");
        return (
          <div
            key={condition}
            className={`notice notice-${intent.reason}`}
            data-testid="notice"
            data-condition={condition}
            data-critical={critical}
            data-reason={intent.reason}
          >
            <button
              type="button"
              className="notice-body"
              title={words}
              onClick={() => {
                if (intent.agentKey) dispatch("agent.open", "button", { key: intent.agentKey });
              }}
            >
              <strong>{intent.title}</strong>
              {intent.body ? <span> · {intent.body}</span> : null}
              {updates > 1 ? <span className="notice-updates"> · ×{updates}</span> : null}
            </button>
            {need && needs.length > 1 ? (
              <button
                type="button"
                className="notice-more link-button"
                data-testid="notice-more"
                onClick={() => dispatch("view.set", "button", { view: "inbox" })}
              >
                and {needs.length - 1} more in the Inbox
              </button>
            ) : null}
            <button
              type="button"
              className="notice-dismiss"
              aria-label={need && needs.length > 1 ? `Dismiss these ${needs.length}` : "Dismiss"}
              onClick={() => dispatch("notice.dismiss", "button", { conditions: (need ? needs : [notice]).map((each) => each.condition) })}
            >
              ×
            </button>
          </div>
        );
      })}
    </section>
  );
}
