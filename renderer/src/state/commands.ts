// Every action the views call directly (a card's decision, a menu item, a link), by concern.
// Registry commands (keys, command buttons, the palette, the tray) go through dispatch.ts instead.
import { agentCommands } from "./agent-commands";
import { links } from "./links";
import { machineCommands } from "./machine-commands";
import { navigation } from "./navigation";
import { settingsCommands } from "./settings-commands";

export const commands = { ...navigation, ...agentCommands, ...links, ...machineCommands, ...settingsCommands };
