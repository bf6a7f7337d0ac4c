import { describe, expect, it } from "vitest";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import { awaitsApproval } from "./Transcript";

const command = (text: string, status: "running" | "pending" | "completed"): TranscriptItem => ({
  type: "command",
  id: "i1",
  runId: "r1",
  createdAt: "t",
  updatedAt: "t",
  command: text,
  exitCode: null,
  status,
});

describe("a command under an approval card", () => {
  it("awaits approval, not runs, while an approval asks about it", () => {
    expect(awaitsApproval(command("npm test", "running"), ["Run `npm test`?"])).toBe(true);
    expect(awaitsApproval(command("npm test", "pending"), ["npm test"])).toBe(true);
  });

  it("runs when no approval asks about it, and a finished command stays finished", () => {
    expect(awaitsApproval(command("npm run build", "running"), ["Run `npm test`?"])).toBe(false);
    expect(awaitsApproval(command("npm test", "running"), [])).toBe(false);
    expect(awaitsApproval(command("npm test", "completed"), ["npm test"])).toBe(false);
    expect(awaitsApproval(command("  ", "running"), ["npm test"])).toBe(false);
  });
});
