import { describe, expect, it } from "vitest";
import { driverName, providerName } from "./provider-name";

describe("provider names for people", () => {
  it("names T3's driver ids as people know them", () => {
    expect(providerName({ providerDriver: "claudeAgent", providerInstanceId: "claudeAgent" })).toBe("Claude");
    expect(providerName({ providerDriver: "codex", providerInstanceId: "codex" })).toBe("Codex");
    expect(providerName({ providerDriver: "opencode", providerInstanceId: "opencode" })).toBe("OpenCode");
  });

  it("uses the instance id where protocol 2 sends no driver", () => {
    expect(providerName({ providerDriver: null, providerInstanceId: "claudeAgent" })).toBe("Claude");
    expect(providerName({ providerDriver: null, providerInstanceId: "cursor" })).toBe("Cursor");
  });

  it("keeps a user's own instance name beside the driver's, so two instances stay apart", () => {
    expect(providerName({ providerDriver: "claudeAgent", providerInstanceId: "claude-work" })).toBe("Claude (claude-work)");
    expect(providerName({ providerDriver: "claudeAgent", providerInstanceId: "claude" })).toBe("Claude");
  });

  it("shows an id it does not know as T3 sent it, and never a name from the object prototype", () => {
    expect(providerName({ providerDriver: "newHarness", providerInstanceId: "newHarness" })).toBe("newHarness");
    expect(driverName("toString")).toBe("toString");
  });
});
