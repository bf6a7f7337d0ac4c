// Machine names on this desk: two paired machines must not read alike. T3 names a machine after its
// host, so two Macs set up alike both arrive as "studio-mac"; the second is offered "studio-mac (2)".

const normalized = (label: string) => label.trim().toLocaleLowerCase("en");

/** Whether `label` reads as one of `taken` (case and surrounding spaces aside). */
export function nameTaken(label: string, taken: Iterable<string>): boolean {
  const wanted = normalized(label);
  for (const name of taken) if (normalized(name) === wanted) return true;
  return false;
}

/** `label` itself when free, else the first free "label (n)" from 2 on. */
export function distinctName(label: string, taken: Iterable<string>): string {
  const names = [...taken];
  if (!nameTaken(label, names)) return label;
  for (let n = 2; ; n++) {
    const candidate = `${label} (${n})`;
    if (!nameTaken(candidate, names)) return candidate;
  }
}
