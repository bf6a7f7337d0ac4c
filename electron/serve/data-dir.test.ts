import { describe, expect, it } from "vitest";
import { defaultDataDir } from "./data-dir";

describe("default data folder", () => {
  it("treats an empty or relative XDG_CONFIG_HOME as unset, so tokens never land in the current folder", () => {
    expect(defaultDataDir({ XDG_CONFIG_HOME: "" }, "/home/ada")).toBe("/home/ada/.config/t3-fleet");
    expect(defaultDataDir({ XDG_CONFIG_HOME: "relative/config" }, "/home/ada")).toBe("/home/ada/.config/t3-fleet");
    expect(defaultDataDir({}, "/home/ada")).toBe("/home/ada/.config/t3-fleet");
    expect(defaultDataDir({ XDG_CONFIG_HOME: "/srv/config" }, "/home/ada")).toBe("/srv/config/t3-fleet");
  });
});
