// `./fleet serve` runs the service through tsx, which turns Node's source maps on for the TypeScript
// it compiles. Node then parses a module's whole map the first time a stack through that module is
// formatted (by whatever reads an error's `stack`), and keeps it for as long as the process runs:
// about a thousand small arrays a module. In the two-hour soak that read as a step in the fleet's
// heap at minute 94 of an hour that was to be flat (docs/architecture.md, issue 43). The desktop
// app's service runs from the built bundle, where source maps are off; the served one does the same
// unless asked for them.

/** Whether the command line or NODE_OPTIONS asks for source maps (`--enable-source-maps`). */
export function sourceMapsAsked(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].includes("--enable-source-maps");
}

/** Turns Node's source maps off unless they were asked for; says whether they stay on. */
export function sourceMapsAsAsked(): boolean {
  const asked = sourceMapsAsked(process.execArgv, process.env.NODE_OPTIONS);
  if (!asked) process.setSourceMapsEnabled(false);
  return asked;
}
