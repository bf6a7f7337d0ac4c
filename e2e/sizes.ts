/** The window sizes people keep T3 Fleet at: two laptop screens, a half screen and a phone-width window. */
export const SIZES = [
  { name: "1400x900", width: 1400, height: 900 },
  { name: "1280x820", width: 1280, height: 820 },
  { name: "900x800", width: 900, height: 800 },
  { name: "390x844", width: 390, height: 844 },
] as const;
