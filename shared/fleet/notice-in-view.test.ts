import { describe, expect, it } from "vitest";
import { noticeInView } from "./notice-in-view";

describe("noticeInView", () => {
  it("only a notification about the agent a focused window shows is already in view", () => {
    expect(noticeInView({ agentKey: "e/a" }, { focused: true, agentKey: "e/a" })).toBe(true);
    expect(noticeInView({ agentKey: "e/a" }, { focused: false, agentKey: "e/a" })).toBe(false);
    expect(noticeInView({ agentKey: "e/b" }, { focused: true, agentKey: "e/a" })).toBe(false);
    expect(noticeInView({ agentKey: "e/a" }, { focused: true, agentKey: null })).toBe(false);
    // A machine's notice (offline, summary) is about no agent: never in view.
    expect(noticeInView({ agentKey: null }, { focused: true, agentKey: null })).toBe(false);
  });
});
