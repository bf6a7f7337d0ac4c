import { commands } from "../state/commands";
import { withdrawNotice } from "../state/notices";
import { useFleet } from "../state/store";

/**
 * Notices sit in their own strip between the filters and the fleet, never over a control: one per
 * condition, updated in place, withdrawn when the condition clears (state/notices.ts).
 */
export function Notices() {
  const notices = useFleet((s) => s.notices);
  const serviceNotices = useFleet((s) => s.serviceNotices);
  // Rendered empty from page load: a live region that appears with its first notice is not heard.
  const empty = notices.size === 0 && serviceNotices.length === 0;
  return (
    <section className={`notices ${empty ? "notices-empty" : ""}`} aria-live="polite" aria-label="Notices" data-testid="notices">
      {serviceNotices.map((notice) => (
        <p key={notice} className="notice notice-service" role="status">
          {notice}
        </p>
      ))}
      {[...notices.values()].map(({ condition, intent, critical, updates }) => {
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
                if (intent.agentKey) void commands.openAgent(intent.agentKey);
              }}
            >
              <strong>{intent.title}</strong>
              {intent.body ? <span> · {intent.body}</span> : null}
              {updates > 1 ? <span className="notice-updates"> · ×{updates}</span> : null}
            </button>
            <button type="button" className="notice-dismiss" aria-label="Dismiss" onClick={() => withdrawNotice(condition)}>
              ×
            </button>
          </div>
        );
      })}
    </section>
  );
}
