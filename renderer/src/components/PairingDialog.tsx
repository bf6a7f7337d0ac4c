import { useEffect, useRef } from "react";
import { INPUT_LIMITS } from "../../../shared/bridge/contract";
import { nameTaken } from "../../../shared/fleet/machine-names";
import { serverWords } from "../../../shared/fleet/views";
import { dispatch } from "../state/dispatch";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";

/** Limits of the pairing inputs, from the bridge contract; a counter shows how close the text is. */
export const PAIRING_INPUT_MAX_CHARS = INPUT_LIMITS.pairingInput;
export const PAIRING_LABEL_MAX_CHARS = INPUT_LIMITS.label;

function Counter({ length, max, testId }: { length: number; max: number; testId: string }) {
  return (
    <span className={`counter ${length > max ? "counter-over" : ""}`} data-testid={testId}>
      {length.toLocaleString("en")} / {max.toLocaleString("en")}
      {length > max ? " — too long" : ""}
    </span>
  );
}

export function PairingDialog() {
  const pairing = useFleet((s) => s.pairing);
  const localServer = useFleet((s) => s.localServer);
  const { editPairing, nameMachine, answerMoved, answerSameName } = useFleet.getState();
  const inputRef = useRef<HTMLTextAreaElement>(null);
  useEffect(() => inputRef.current?.focus(), []);
  const preview = pairing.preview;
  // A server claiming a machine paired elsewhere is paired only once the user says that machine moved.
  // Named like another paired machine: asked first, unless the name given tells them apart.
  const sameName = preview?.sameName && !preview.pairedElsewhere ? preview.sameName : null;
  const alike = sameName !== null && nameTaken(pairing.label.trim() || preview!.label, [sameName.label]);
  const unanswered = (preview?.pairedElsewhere != null && !pairing.moved) || (alike && !pairing.sameNameOk);
  const tooLong =
    pairing.input.length > PAIRING_INPUT_MAX_CHARS || pairing.token.length > PAIRING_INPUT_MAX_CHARS || pairing.label.length > PAIRING_LABEL_MAX_CHARS;

  return (
    <div className="dialog-backdrop">
      {/* The dialog holds the form (a form cannot be a dialog): its fields submit with Enter. */}
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="pair-title" data-testid="pairing-dialog">
        <form
          className="dialog-form"
          aria-labelledby="pair-title"
          onSubmit={(event) => {
            event.preventDefault();
            if (tooLong || unanswered) return;
            dispatch(preview ? "pairing.confirm" : "pairing.inspect", "button");
          }}
        >
          <h2 id="pair-title">{pairing.environmentId ? "Pair this machine again" : "Pair a T3 environment"}</h2>
          <p className="hint" data-testid="pair-supported">
            Works with T3 0.0.24 (fork generation) through 0.0.42 (upstream) on orchestration protocol 1, and with upstream main and nightly builds since
            2026-10-03 (v0.0.46-nightly.20261003 and later) on protocol 2.
          </p>
          <label>
            <span className="label-line">
              Pairing link or host
              <Counter length={pairing.input.length} max={PAIRING_INPUT_MAX_CHARS} testId="pair-input-counter" />
            </span>
            <textarea
              ref={inputRef}
              data-testid="pair-input"
              rows={2}
              value={pairing.input}
              aria-invalid={pairing.input.length > PAIRING_INPUT_MAX_CHARS}
              placeholder="http://100.101.102.103:3773/pair#token=… or https://box.tailnet.ts.net"
              onChange={(event) => editPairing({ input: event.target.value })}
            />
          </label>
          <label>
            <span className="label-line">
              Pairing code or token (only when the link has none)
              <Counter length={pairing.token.length} max={PAIRING_INPUT_MAX_CHARS} testId="pair-token-counter" />
            </span>
            <input
              type="password"
              data-testid="pair-token"
              autoComplete="off"
              value={pairing.token}
              onChange={(event) => editPairing({ token: event.target.value })}
            />
          </label>
          {localServer && !localServer.alreadyPaired && !pairing.input ? (
            <p className="hint">
              A T3 server answers on this machine ({localServer.label}).{" "}
              <button type="button" onClick={() => editPairing({ input: localServer.baseUrl })}>
                Use it
              </button>
            </p>
          ) : null}
          {preview ? (
            <div className="preview" data-testid="pair-preview">
              <p className="clipped" title={preview.label}>
                <strong>{preview.label}</strong> · {serverWords(preview)} · {preview.generation === "upstream" ? "scoped tokens" : "bearer sessions"}
              </p>
              <p className="clipped" title={`${preview.environmentId} at ${preview.baseUrl}`}>
                Environment <code>{preview.environmentId}</code> at {preview.baseUrl}
              </p>
              {preview.pairedElsewhere ? (
                <div className="impostor" role="group" aria-labelledby="pair-impostor-question" data-testid="pair-impostor">
                  <p className="error" id="pair-impostor-question">
                    This server claims to be <strong>{preview.pairedElsewhere.label}</strong>, which you paired at {preview.pairedElsewhere.baseUrl}: same
                    machine moved, or an impostor?
                  </p>
                  <label>
                    <input type="checkbox" data-testid="pair-moved" checked={pairing.moved} onChange={(event) => answerMoved(event.target.checked)} />{" "}
                    {preview.pairedElsewhere.label} moved to {preview.baseUrl}: pair it here
                  </label>
                  <p className="hint">
                    Unless you say it moved, nothing is sent to this server and {preview.pairedElsewhere.label} stays at {preview.pairedElsewhere.baseUrl}.
                  </p>
                </div>
              ) : preview.alreadyPaired ? (
                <p className="hint">Already paired: pairing again updates it.</p>
              ) : null}
              {!preview.hasToken && !pairing.token ? <p className="error">Add the pairing code or a token to pair.</p> : null}
              {sameName ? (
                <div className="same-name" role="group" aria-labelledby="pair-same-name-question" data-testid="pair-same-name">
                  <p id="pair-same-name-question">
                    You already have a machine named <strong>{sameName.label}</strong> (at {sameName.baseUrl}); this one, at {preview.baseUrl}, has the same
                    name. Name it below so you can tell them apart.
                  </p>
                  {alike ? (
                    <label>
                      <input
                        type="checkbox"
                        data-testid="pair-same-name-ok"
                        checked={pairing.sameNameOk}
                        onChange={(event) => answerSameName(event.target.checked)}
                      />{" "}
                      Keep both named {sameName.label}
                    </label>
                  ) : null}
                </div>
              ) : null}
              <label>
                <span className="label-line">
                  Name on this desk {sameName ? "" : "(optional)"}
                  <Counter length={pairing.label.length} max={PAIRING_LABEL_MAX_CHARS} testId="pair-label-counter" />
                </span>
                <input data-testid="pair-label" value={pairing.label} onChange={(event) => nameMachine(event.target.value)} placeholder={preview.label} />
              </label>
            </div>
          ) : null}
          <PlaceError place="pairing" />
          {pairing.error ? (
            <p className="error" role="alert" data-testid="pair-error">
              {pairing.error}
            </p>
          ) : null}
          <div className="dialog-actions">
            <button type="button" onClick={() => dispatch("pairing.close", "button")}>
              Cancel
            </button>
            <button type="submit" className="primary" data-testid="pair-submit" disabled={pairing.busy || pairing.input.trim() === "" || tooLong || unanswered}>
              {pairing.busy ? "Checking…" : preview ? "Pair" : "Check server"}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
