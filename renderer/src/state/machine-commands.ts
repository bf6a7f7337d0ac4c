// Machines: pairing one (the dialog's steps) and what the user does to a paired one.
import { requireBridge, errorMessage, run, tracked } from "./requests";
import { useFleet } from "./store";

export const machineCommands = {
  openPairing(environmentId: string | null = null, input = ""): void {
    useFleet.getState().openPairing(environmentId, input);
  },

  closePairing(): void {
    useFleet.getState().closePairing();
  },

  async inspectPairing(): Promise<void> {
    const { pairing, pairingBusy } = useFleet.getState();
    pairingBusy();
    try {
      useFleet.getState().pairingPreviewed(await tracked(() => requireBridge().request("pair.inspect", { input: pairing.input })));
    } catch (error) {
      useFleet.getState().pairingFailed(errorMessage(error));
    }
  },

  async confirmPairing(): Promise<void> {
    const { pairing, pairingBusy } = useFleet.getState();
    pairingBusy();
    try {
      await tracked(() =>
        requireBridge().request("pair.confirm", {
          input: pairing.input,
          ...(pairing.token.trim() && { token: pairing.token.trim() }),
          ...(pairing.label.trim() && { label: pairing.label.trim() }),
          ...(pairing.moved && { moved: true }),
        }),
      );
      machineCommands.closePairing();
    } catch (error) {
      useFleet.getState().pairingFailed(errorMessage(error));
    }
  },

  async renameEnvironment(environmentId: string, label: string): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.rename", { environmentId, label }));
  },

  async removeEnvironment(environmentId: string): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.remove", { environmentId }));
  },

  async muteEnvironment(environmentId: string, muted: boolean): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.mute", { environmentId, muted }));
  },

  async retryEnvironment(environmentId: string): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.retry", { environmentId }));
  },
};
