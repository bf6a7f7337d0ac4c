// Failure reasons of protocol-2 runs: learned from projections, read when missing, and forgotten with
// their thread, also when a read for it is still on its way (a day of churn must not keep them all).
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadProjection } from "../../../../shared/t3/protocol2/schemas";
import { V2Engine } from "../../../../sim/protocol2/engine";
import { untilEngine } from "../../../../sim/protocol2/engine.testkit";
import { FailureReasons, REASONS_KEPT_PER_THREAD } from "./failure-reasons";

const engines: V2Engine[] = [];
afterEach(() => {
  while (engines.length) engines.pop()!.halt();
});

/** A thread whose one run failed, as the simulated engine projects it. */
async function failedThread(): Promise<{ projection: ThreadProjection; runId: string }> {
  const engine = new V2Engine({ tickMs: 2 });
  engines.push(engine);
  engine.addProject({ id: "p", title: "Repo", workspaceRoot: "/repo" });
  const threadId = engine.createThread({ projectId: "p", title: "Task", provider: "claudeAgent" }).thread.id;
  engine.dispatch({
    type: "message.dispatch",
    createdBy: "user",
    creationSource: "web",
    commandId: "c1",
    threadId,
    messageId: "m1",
    text: "#fail:transport_error",
    attachments: [],
    dispatchMode: { type: "queue_after_active" },
  });
  const state = () => engine.threads.get(threadId)!;
  await untilEngine(engine, () => state().runs[0]?.status === "failed", "failed");
  return { projection: engine.projection(state()) as unknown as ThreadProjection, runId: state().runs[0]!.id };
}

describe("failure reasons", () => {
  it("learns a failed run's reason from a projection, and forgets it with its thread", async () => {
    const { projection, runId } = await failedThread();
    const reasons = new FailureReasons(() => Promise.reject(new Error("no read expected")));
    expect(reasons.learn(projection)).toBe(true);
    expect(reasons.reason(projection.thread.id, runId)).toBe("Claude failed: transport error");
    reasons.forget(projection.thread.id);
    expect(reasons.reason(projection.thread.id, runId)).toBeUndefined();
  });

  it("a thread that fails all day keeps the reasons of its newest runs only, and what it keeps is not news again (issue 43)", async () => {
    const { projection, runId } = await failedThread();
    const run = projection.runs.find((entry) => entry.id === runId)!;
    const error = projection.turnItems.find((item) => item.type === "error" && item.runId === runId)!;
    const reasons = new FailureReasons(() => Promise.reject(new Error("no read expected")));
    const runIds: string[] = [];
    let day = projection;
    for (let i = 0; i < 200; i++) {
      const id = `run-${i}`;
      runIds.push(id);
      // The thread's projection as its stream grows: one more failed run, with its own reason.
      day = {
        ...day,
        runs: [...day.runs, { ...run, id }],
        turnItems: [
          ...day.turnItems,
          { ...error, id: `error-${i}`, runId: id, failure: { ...(error as { failure: object }).failure, message: `failure ${i}` } } as typeof error,
        ],
      };
      expect(reasons.learn(day)).toBe(true);
      expect(reasons.reason(day.thread.id, id)).toBe(`failure ${i}`);
    }
    expect(runIds.filter((id) => reasons.reason(day.thread.id, id) !== undefined)).toEqual(runIds.slice(-REASONS_KEPT_PER_THREAD));
    expect(reasons.learn(day)).toBe(false);
  });

  it("a read that lands after its thread was forgotten keeps nothing; one queued behind it is dropped", async () => {
    const { projection, runId } = await failedThread();
    let land: (value: ThreadProjection) => void = () => {};
    const reads: string[] = [];
    const reasons = new FailureReasons(
      (threadId) => {
        reads.push(threadId);
        return new Promise((resolve) => (land = resolve));
      },
      { concurrency: 1, perSnapshot: 4 },
    );
    const done: string[] = [];
    const firstDone = new Promise<void>((resolve) =>
      reasons.request(projection.thread.id, runId, false, () => {
        done.push("first");
        resolve();
      }),
    );
    reasons.request("another-thread", "run-x", false, () => done.push("queued"));
    reasons.forget(projection.thread.id);
    reasons.forget("another-thread");
    land(projection);
    await firstDone;
    expect(reasons.reason(projection.thread.id, runId)).toBeUndefined();
    // The queued read for a forgotten thread never went out.
    expect(reads).toEqual([projection.thread.id]);
    expect(done).toEqual(["first"]);
  });
});
