import { describe, expect, it } from "vitest";
import { HOSTILE } from "../../shared/t3/hostile-text.testkit";
import { rateLimited, writeLines } from "./terminal";

describe("terminal output", () => {
  it("writes each argument as one inert line", () => {
    let written = "";
    writeLines({ write: (text: string) => (written += text) }, `paired ${HOSTILE.screenClear}`, HOSTILE.forgedLine);
    expect(written.split("\n")).toEqual(["paired \\x1b[2J\\x1b[3J\\x1b[Hok", expect.stringMatching(/^oops\\x0d\\x0aT3 Fleet is running/), ""]);
  });

  it("lets a burst of log lines through up to the limit, then says how many it dropped", () => {
    let now = 0;
    const lines: string[] = [];
    const log = rateLimited((line) => lines.push(line), { lines: 3, windowMs: 1_000, now: () => now });
    for (let i = 0; i < 100; i++) log(`failure ${i}`);
    expect(lines).toEqual(["failure 0", "failure 1", "failure 2"]);
    now = 1_000;
    log("later");
    expect(lines.slice(3)).toEqual(["t3-fleet serve: 97 more log lines were dropped (over 3 in 1 s)", "later"]);
  });
});
