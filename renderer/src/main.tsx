import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { createBridge } from "./bridge/client";
import { startEffects } from "./state/bridge-events";
import { startFoldClock } from "./state/clock";
import { keepFocusOffBody } from "./state/focus";
import { listenForKeys } from "./state/keys";
import "./styles/base.css";
import "./styles/layout.css";
import "./styles/panes.css";
import "./styles/find-machines.css";
import "./styles/actions.css";
import "./styles/changes.css";

startEffects(createBridge());
listenForKeys();
startFoldClock();
keepFocusOffBody();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
