import { describe, expect, it } from "vitest";
import { distinctName, nameTaken } from "./machine-names";

describe("machine names", () => {
  it("keeps a free name and offers the first free numbered one for a taken name", () => {
    expect(distinctName("studio-mac", ["build-box"])).toBe("studio-mac");
    expect(distinctName("studio-mac", ["studio-mac"])).toBe("studio-mac (2)");
    expect(distinctName("studio-mac", ["Studio-Mac ", "studio-mac (2)"])).toBe("studio-mac (3)");
  });

  it("compares names as people read them: case and surrounding spaces aside", () => {
    expect(nameTaken(" STUDIO-mac", ["studio-mac"])).toBe(true);
    expect(nameTaken("studio-mac (2)", ["studio-mac"])).toBe(false);
  });
});
