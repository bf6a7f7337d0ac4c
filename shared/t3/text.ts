// Server text is data, never control. Every string a T3 server sends passes through one of the
// schemas below when it is decoded (shared/t3/schemas.ts and each protocol's schemas.ts): terminal escape
// sequences (CSI, OSC such as OSC 52 clipboard writes, DCS...), C0/C1 control characters and bidi
// overrides or isolates are removed, and each kind of field has a length cap. What reaches a
// terminal passes once more through `terminalLine`, which can never emit a control character.
/* eslint-disable no-control-regex -- finding control characters is what this module is for */
import { z } from "zod";

/**
 * Caps in UTF-16 code units, per kind of field. A title is shown on one line and cut by the UI; the
 * whole (capped) title is kept for its hover text, so the cap is a bound on memory, not the display.
 */
export const TEXT_LIMITS = {
  /** Names: machine label, project title, branch, model, provider, version, tags. */
  label: 256,
  /** Thread and item titles (shown cut on one line, whole on hover). */
  title: 1_024,
  /** Error messages, failure reasons, summaries: one paragraph. */
  reason: 4_096,
  /** File system paths. */
  path: 4_096,
  /** Messages, plans, prompts, command text: multi-line bodies. */
  body: 262_144,
} as const;
export type TextKind = keyof typeof TEXT_LIMITS;

// ESC-introduced sequences: CSI (ESC [ params final), OSC / DCS / SOS / PM / APC strings up to BEL or
// ST (or the end of the text when unterminated), and two-byte escapes. The 8-bit C1 forms (0x9B CSI,
// 0x9D OSC, 0x90 DCS...) likewise. Removed whole, so no parameter text is left behind.
const ESCAPE_SEQUENCES =
  /\x1b\[[0-?]*[ -/]*[@-~]?|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|\x9b[0-?]*[ -/]*[@-~]?|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?/g;
/** Bidi embeddings, overrides and isolates, and the implicit marks: they reorder what is shown. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Control characters left after the sequences are gone (tab and line feed kept by multi-line text). */
const CONTROLS_MULTILINE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/** In one-line text every line break (also U+2028/U+2029) becomes a space. */
const CONTROLS_ONE_LINE = /[\x00-\x1f\x7f-\x9f\u2028\u2029]+/g;
/** Fast path: most server text holds none of these. */
const SUSPECT = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
const SUSPECT_ONE_LINE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

/**
 * Cuts `text` to at most `max` code units (never inside a surrogate pair), saying how much was cut;
 * `alreadyCut` counts characters a caller dropped before (they are included in the count shown).
 */
export function capText(text: string, max: number, alreadyCut = 0): string {
  if (text.length <= max && alreadyCut === 0) return text;
  const total = text.length + alreadyCut;
  const markerFor = (shown: number) => ` … (${(total - shown).toLocaleString("en-US")} more characters)`;
  // Two characters of slack: the count grows by the marker's own length, which may add a digit.
  let end = Math.max(0, Math.min(text.length, max - markerFor(max).length - 2));
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end) + markerFor(end);
}

/**
 * Server text as inert text: escape sequences, control characters and bidi controls removed, then
 * capped. Multi-line text keeps tab and line feed (CR LF becomes LF); one-line text turns every
 * line break and tab into a space.
 */
export function cleanText(text: string, options: { max: number; multiline?: boolean }): string {
  // Bound the work first: a 5 MB error is cut before any regular expression sees it (the margin
  // leaves room for the sequences removed below).
  const bound = options.max + 1_024;
  let out = text.length > bound ? text.slice(0, bound) : text;
  if ((options.multiline ? SUSPECT : SUSPECT_ONE_LINE).test(out)) {
    out = out.replace(ESCAPE_SEQUENCES, "").replace(BIDI_CONTROLS, "");
    out = options.multiline ? out.replace(/\r\n?/g, "\n").replace(CONTROLS_MULTILINE, "") : out.replace(CONTROLS_ONE_LINE, " ");
  }
  return capText(out, options.max, text.length - Math.min(text.length, bound));
}

/** A name from outside (a server's label, a link's label, a tailnet peer's name): inert, one line, single-spaced, capped. */
export function cleanLabel(text: string): string {
  return cleanText(text, { max: TEXT_LIMITS.label }).replace(/\s+/g, " ").trim();
}

const oneLine = (kind: TextKind) => z.string().transform((text) => cleanText(text, { max: TEXT_LIMITS[kind] }));
const multiLine = (kind: TextKind) => z.string().transform((text) => cleanText(text, { max: TEXT_LIMITS[kind], multiline: true }));

/** The decoding hook: the string schema of each kind of server text field. */
export const ServerText = {
  label: oneLine("label"),
  title: oneLine("title"),
  reason: oneLine("reason"),
  path: oneLine("path"),
  body: multiLine("body"),
} as const;

/** Longest line written to a terminal: enough for any message of ours plus a capped server reason. */
export const TERMINAL_LINE_MAX = 2_000;
/** Longest quotation of server text: with the fleet's own words around it the line stays within TERMINAL_LINE_MAX, so its closing quote is never cut. */
export const QUOTATION_MAX = 1_000;

/**
 * Text as one terminal line that can carry no escape sequence: every control character (ESC, CR,
 * LF, BEL, C1...) and bidi control is shown as a visible `\xNN`/`\uNNNN` instead of being sent, so
 * nothing from a server can clear the screen, write the clipboard, or start a forged line.
 */
export function terminalLine(text: string, max = TERMINAL_LINE_MAX): string {
  const visible = capText(text, max).replace(/[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return visible;
}

/**
 * Server text for a line of the fleet's own: in double quotes, its own quotes and backslashes
 * escaped and whitespace runs single-spaced, so it can neither close the quotation nor pad itself onto
 * a line of its own; the caller says whose words they are. Control characters are then shown
 * visibly by `terminalLine`.
 */
export function quotedText(text: string, max: number = QUOTATION_MAX): string {
  return `"${capText(text, max)
    .replace(/\s+/g, " ")
    .trim()
    .replace(/["\\]/g, (char) => `\\${char}`)}"`;
}

/** Notification title or body: one line of plain text, no markup (some OS notification servers render HTML tags). */
export function notificationText(text: string, max: number = TEXT_LIMITS.reason): string {
  return cleanText(text, { max })
    .replace(/<\/?[A-Za-z!?][^<>]*>/g, "")
    .replace(/[<>]/g, (char) => (char === "<" ? "‹" : "›"));
}
