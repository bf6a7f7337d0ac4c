/* eslint-disable no-control-regex -- the assertions look for control characters */
import { describe, expect, it } from "vitest";
import { EnvironmentDescriptor } from "./schemas";
import { ThreadShell, ThreadSession } from "./protocol1/schemas";
import { ThreadShellV2 } from "./protocol2/shell-row";
import { TurnItemSchema } from "./protocol2/schemas";
import { cleanText, notificationText, ServerText, TEXT_LIMITS, terminalLine } from "./text";
import { httpFailure } from "./errors";
import { HOSTILE } from "./hostile-text.testkit";

const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe("server text", () => {
  it("removes escape sequences whole, with their parameters", () => {
    expect(cleanText(HOSTILE.osc52, { max: 100 })).toBe("build done");
    expect(cleanText(HOSTILE.screenClear, { max: 100 })).toBe("ok");
    expect(cleanText(HOSTILE.c1Csi, { max: 100 })).toBe("aredtext");
  });

  it("turns line breaks into spaces in one-line fields, keeps them in bodies", () => {
    const line = cleanText(HOSTILE.forgedLine, { max: 1_000 });
    expect(line).not.toMatch(/[\r\n]/);
    expect(line.startsWith("oops T3 Fleet is running.")).toBe(true);
    expect(cleanText("a\r\nb\rc\td\x07", { max: 100, multiline: true })).toBe("a\nb\nc\td");
  });

  it("drops bidi overrides and isolates", () => {
    expect(cleanText(HOSTILE.rlo, { max: 100 })).toBe("invoice gnp.exe");
    expect(cleanText("\u2066x\u2069\u200f", { max: 100 })).toBe("x");
  });

  it("caps each kind of field and says how much was cut, without reading all of a 5 MB string", () => {
    const reason = cleanText(HOSTILE.huge, { max: TEXT_LIMITS.reason });
    expect(reason.length).toBeLessThanOrEqual(TEXT_LIMITS.reason);
    expect(reason).toMatch(/more characters\)$/);
    const shown = reason.indexOf(" … (");
    expect(reason.slice(shown)).toBe(` … (${(HOSTILE.huge.length - shown).toLocaleString("en-US")} more characters)`);
    expect(ServerText.title.parse("t".repeat(10_000)).length).toBeLessThanOrEqual(TEXT_LIMITS.title);
    // A surrogate pair is never split.
    const emoji = cleanText("😀".repeat(600), { max: 101 });
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it("leaves ordinary text untouched", () => {
    const text = "Fix the login bug — naïve café, 日本語, emoji 😀, tabs\tand\nlines";
    expect(cleanText(text, { max: 1_000, multiline: true })).toBe(text);
  });

  it("is applied where both protocols decode: descriptor, titles, lastError, items, error bodies", () => {
    const descriptor = EnvironmentDescriptor.parse({
      environmentId: "e",
      label: `studio${HOSTILE.screenClear}`,
      serverVersion: `0.0.42${HOSTILE.osc52}`,
    });
    expect(descriptor.label).toBe("studiook");
    expect(descriptor.serverVersion).not.toMatch(CONTROL);

    const session = ThreadSession.parse({
      threadId: "t",
      status: "error",
      activeTurnId: null,
      lastError: HOSTILE.huge,
      updatedAt: "2026-01-01T00:00:00.000Z",
    });
    expect(session.lastError!.length).toBeLessThanOrEqual(TEXT_LIMITS.reason);

    const titleV1 = ThreadShell.shape.title.parse(HOSTILE.rlo);
    const titleV2 = ThreadShellV2.shape.title.parse(HOSTILE.rlo);
    expect(titleV1).toBe("invoice gnp.exe");
    expect(titleV2).toBe("invoice gnp.exe");
    const lastErrorV2 = ThreadShellV2.shape.lastError.parse(HOSTILE.forgedLine);
    expect(lastErrorV2).not.toMatch(/[\r\n]/);

    const item = TurnItemSchema.parse({
      id: "i",
      threadId: "t",
      runId: null,
      nodeId: null,
      ordinal: 0,
      status: "failed",
      title: HOSTILE.osc52,
      startedAt: null,
      completedAt: null,
      updatedAt: "2026-01-01T00:00:00.000Z",
      type: "error",
      failure: { class: "provider_error", message: HOSTILE.screenClear, code: null, retryable: null },
    }) as { title: string; failure: { message: string } };
    expect(item.title).toBe("build done");
    expect(item.failure.message).toBe("ok");

    const fork = httpFailure(500, "application/json", JSON.stringify({ error: HOSTILE.osc52 }), "pairing");
    expect(fork.message).toBe("pairing: build done");
    const plain = httpFailure(503, "text/plain", HOSTILE.screenClear + HOSTILE.huge, "pairing");
    expect(plain.message).not.toMatch(CONTROL);
    expect(plain.message.length).toBeLessThan(300);
  });
});

describe("terminal lines", () => {
  it("can never carry a control character, whatever they are given", () => {
    for (const text of Object.values(HOSTILE)) {
      const line = terminalLine(`error: ${text}`);
      expect(line).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
      expect(line.length).toBeLessThanOrEqual(2_000);
    }
    expect(terminalLine("a\x1b[2Jb\nc")).toBe("a\\x1b[2Jb\\x0ac");
  });
});

describe("notification text", () => {
  it("is one line of plain text without markup", () => {
    expect(notificationText('studio · <a href="https://evil.example">click</a> <b>now</b>')).toBe("studio · click now");
    expect(notificationText("x < y > z")).toBe("x ‹ y › z");
    expect(notificationText(HOSTILE.forgedLine)).not.toMatch(/[\r\n]/);
  });
});
