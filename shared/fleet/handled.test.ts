// The words of a confirmation and of the "handled today" list, and which entries belong to today.
import { describe, expect, it } from "vitest";
import { decidedAbout, destructiveDecision, type HandledEntry, handledSince, handledWords, startOfLocalDay, wakeWords } from "./handled";

const time = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const entry = (action: HandledEntry["action"], at = 0): HandledEntry => ({ id: `h${at}`, at, key: "e/t", agent: "worker-2", machine: "build-box-2", action });

describe("handled actions", () => {
  it("a confirmation names what was done, to which agent, on which machine", () => {
    expect(handledWords(entry({ kind: "decided", decision: "accept", detail: "npm test" }), time)).toBe("Approved “npm test” for worker-2 on build-box-2");
    expect(handledWords(entry({ kind: "decided", decision: "acceptForSession", detail: "npm test" }), time)).toBe(
      "Approved “npm test” for the session of worker-2 on build-box-2",
    );
    expect(handledWords(entry({ kind: "decided", decision: "decline", detail: null }), time)).toBe("Denied the request for worker-2 on build-box-2");
    expect(handledWords(entry({ kind: "decided", decision: "cancel", detail: "rm -rf build" }), time)).toBe(
      "Denied “rm -rf build” and stopped the turn of worker-2 on build-box-2",
    );
    expect(handledWords(entry({ kind: "answered" }), time)).toBe("Answered worker-2 on build-box-2");
    expect(handledWords(entry({ kind: "acknowledged" }), time)).toBe("Acknowledged worker-2 on build-box-2");
    expect(handledWords(entry({ kind: "unacknowledged" }), time)).toBe("Brought back worker-2 on build-box-2: no longer acknowledged");
    expect(handledWords(entry({ kind: "snoozed", until: Date.parse("2026-12-01T16:05:00Z") }), time)).toBe("Snoozed worker-2 on build-box-2 until 16:05");
    expect(handledWords(entry({ kind: "snoozed", until: null }), time)).toBe("Snoozed worker-2 on build-box-2 until it changes");
    expect(handledWords(entry({ kind: "unsnoozed" }), time)).toBe("Woke worker-2 on build-box-2");
    expect(handledWords(entry({ kind: "stopped" }), time)).toBe("Stopped the session of worker-2 on build-box-2");
  });

  it("quotes only the first line of a long command, clipped", () => {
    const words = handledWords(entry({ kind: "decided", decision: "accept", detail: `${"x".repeat(100)}\nsecond line` }), time);
    expect(words).toBe(`Approved “${"x".repeat(59)}…” for worker-2 on build-box-2`);
  });

  it("keeps only the first line of what was decided, so a heredoc the user approved is not held all day", () => {
    const heredoc = `cat > big.txt <<'EOF'\n${"line\n".repeat(10_000)}EOF`;
    const about = decidedAbout({
      kind: "approval",
      requestId: "r1",
      requestKind: "command",
      detail: heredoc,
      createdAt: "2026-12-05T10:00:00Z",
      decisions: [],
    });
    expect(about).toMatchObject({ detail: "cat > big.txt <<'EOF'", requestKind: "command" });
    expect(decidedAbout(undefined)).toEqual({ detail: null });
  });

  it("a protocol-2 approval quotes the agent's question as its question, not as the command, and no code marks show raw", () => {
    // As the demo's "Run the integration suite" asked on protocol 2 (sim/protocol2/steps.ts).
    const asked = { kind: "decided", decision: "decline", detail: "Run `npm test`?", requestKind: "command", asked: true } as const;
    expect(handledWords(entry(asked), time)).toBe("Denied a command (“Run npm test?”) for worker-2 on build-box-2");
    expect(handledWords(entry({ ...asked, requestKind: "mcp-elicitation", detail: "May I use the `db` tool?" }), time)).toBe(
      "Denied a tool's question (“May I use the db tool?”) for worker-2 on build-box-2",
    );
    // A command is the command: its own backticks are the shell's and stay.
    expect(handledWords(entry({ kind: "decided", decision: "accept", detail: "echo `date`", requestKind: "command" }), time)).toBe(
      "Approved “echo `date`” for worker-2 on build-box-2",
    );
    for (const words of [handledWords(entry(asked), time), handledWords(entry({ kind: "decided", decision: "accept", detail: "npm test" }), time)])
      expect(words, "no Markdown code span shown raw").not.toMatch(/`[^`]*`/);
  });

  it("a wake time, or until it changes", () => {
    expect(wakeWords(null, time)).toBe("until it changes");
    expect(wakeWords(Date.parse("2026-12-01T09:30:00Z"), time)).toBe("until 09:30");
  });

  it("today starts at local midnight, and lists what was handled since then, newest first", () => {
    const now = new Date(2026, 11, 1, 14, 30).getTime();
    const midnight = new Date(2026, 11, 1, 0, 0).getTime();
    expect(startOfLocalDay(now)).toBe(midnight);
    expect(startOfLocalDay(midnight)).toBe(midnight);
    const entries = [entry({ kind: "answered" }, midnight - 1), entry({ kind: "acknowledged" }, midnight), entry({ kind: "stopped" }, now)];
    expect(handledSince(entries, startOfLocalDay(now)).map((handled) => handled.action.kind)).toEqual(["stopped", "acknowledged"]);
    // Two in the same millisecond: the later one is newer.
    const together = [entry({ kind: "acknowledged" }, now), entry({ kind: "unacknowledged" }, now)];
    expect(handledSince(together, midnight).map((handled) => handled.action.kind)).toEqual(["unacknowledged", "acknowledged"]);
  });

  it("only a decision that stops work asks once more before it is sent", () => {
    expect(destructiveDecision("cancel")).toBe(true);
    for (const decision of ["accept", "acceptForSession", "acceptAlways", "decline"] as const) expect(destructiveDecision(decision)).toBe(false);
  });
});
