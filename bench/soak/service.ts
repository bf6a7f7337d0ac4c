// The fleet service as `./fleet serve` runs it (electron/serve/cli.ts), in its own process on one
// data folder, and the page in Debian's Chromium beside the soak's own bridge connection.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { RESOURCE_REPORT_ENV, RESOURCE_REPORT_OBJECT_STATS_ENV, type ResourceReport } from "../../electron/serve/resource-report";
import { SoakBridge } from "./bridge-client";
import { lastLiveSection, type ObjectStats, objectStats } from "./object-stats";
import { type Child, endChild, exited, serviceReport, startTsx } from "./processes";

export interface ServiceOptions {
  dataDir: string;
  reportPath: string;
  /** A copy of the built renderer to serve, for a run beside others that rebuild out/renderer (bench/soak/heap-churn.ts). */
  rendererDir?: string;
  /**
   * Where the service's stdout goes (appended, a file: V8 prints with C's stdio, which drops what a
   * non-blocking pipe cannot take). With it, V8's live size of each instance type at each resource
   * report's own collection (electron/serve/resource-report.ts), which `report` reads and
   * bench/soak/heap-types.ts reads for a whole run; the launch links in it are spent by then.
   */
  stdoutPath: string;
}

export class SoakService {
  child: Child | undefined;
  port = 0;
  origin = "";
  launchUrl = "";
  restarts = 0;
  readonly bridge = new SoakBridge();
  private browser: Browser | undefined;
  page: Page | undefined;
  pageErrors: string[] = [];

  constructor(private readonly options: ServiceOptions) {}

  get pid(): number {
    return this.child!.pid;
  }

  async start(): Promise<void> {
    const { child, match } = await startTsx(
      "electron/serve/cli.ts",
      [
        "--data-dir",
        this.options.dataDir,
        "--secrets",
        "file",
        "--port",
        String(this.port),
        ...(this.options.rendererDir ? ["--renderer-dir", this.options.rendererDir] : []),
      ],
      /(http:\/\/127\.0\.0\.1:(\d+))\/#code=\S+/,
      { [RESOURCE_REPORT_ENV]: this.options.reportPath, [RESOURCE_REPORT_OBJECT_STATS_ENV]: "1" },
      { stdoutFile: this.options.stdoutPath },
    );
    this.child = child;
    this.launchUrl = match[0];
    this.origin = match[1]!;
    this.port = Number(match[2]);
  }

  /**
   * The service's resource report (undefined when it did not answer in time), and the live bytes by
   * group of the collection it made (null when V8's lines for it are not whole in the file).
   */
  async report(): Promise<{ report: ResourceReport | undefined; objects: ObjectStats | null }> {
    const fd = openSync(this.options.stdoutPath, "r");
    try {
      const from = fstatSync(fd).size;
      const report = await serviceReport(this.pid, this.options.reportPath);
      const text = Buffer.alloc(fstatSync(fd).size - from);
      readSync(fd, text, 0, text.length, from);
      const live = report ? lastLiveSection(text.toString("utf8")) : null;
      return { report, objects: live && objectStats(live) };
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Opens (or reopens) the page with the current launch link, then the soak's bridge. `afterRestart`:
   * the service is a new one, so the session the tab held before is dead and the page must trade the link for a new one.
   */
  async openPage(afterRestart = false): Promise<void> {
    if (!this.browser) {
      this.browser = await chromium.launch({
        executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
      this.page = await this.browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await this.page.addInitScript(() => {
        if (location.protocol === "http:") sessionStorage.setItem("t3fleet.pane", "fleet");
      });
      // tsx keeps function names with a `__name` helper that the page does not have.
      await this.page.addInitScript("globalThis.__name = (fn) => fn;");
      this.page.on("pageerror", (error) => this.pageErrors.push(error.message));
    }
    // The tab keeps its sessionStorage across navigations on the same origin (a restarted service has
    // its port): until the page has traded the new link's code, it holds the killed service's session,
    // which the new service refuses (4401). So after a restart the soak waits for a session other than that one.
    const before = afterRestart ? await this.page!.evaluate(() => sessionStorage.getItem("t3fleet.session")).catch(() => null) : null;
    // A new link differs from the open page only in its fragment: without leaving first, going to it
    // would be a same-document navigation and the page would keep its old, dead session.
    await this.page!.goto("about:blank");
    await this.page!.goto(this.launchUrl);
    await this.waitForPage();
    const session = await this.page!.waitForFunction(
      (old) => {
        const current = sessionStorage.getItem("t3fleet.session");
        return current !== null && current !== old ? current : null;
      },
      before,
      { timeout: 30_000 },
    )
      .then((handle) => handle.jsonValue())
      .catch(() => null);
    if (!session) throw new Error("the page holds no new session 30 s after opening the launch link");
    await this.bridge.connect(this.origin, session);
  }

  /**
   * Reloads the page and returns how long, in ms, until its tree showed `expected` (the probe's row,
   * which sorts first) on screen: the wait of a user who reloads until the fleet is back.
   */
  async reloadPage(expected: string): Promise<number> {
    const began = Date.now();
    await this.page!.reload();
    await this.page!.waitForFunction((text) => document.querySelector('[data-testid="fleet-tree"]')?.textContent?.includes(text) === true, expected, {
      timeout: 60_000,
    });
    await this.page!.evaluate(() => new Promise((done) => requestAnimationFrame(done)));
    return Date.now() - began;
  }

  private async waitForPage(): Promise<void> {
    await this.page!.waitForFunction(() => document.querySelector('[data-testid="fleet-summary"]') !== null, undefined, { timeout: 60_000 });
  }

  /** SIGKILL: nothing is flushed, nothing closed; the data folder is what it was at that instant. */
  async kill(): Promise<void> {
    endChild(this.child!, "SIGKILL");
    await exited(this.child!);
    this.bridge.close();
  }

  async restart(): Promise<void> {
    await this.start();
    this.restarts++;
    // The page trades its new link for a session while it loads; a bridge opened on the session it
    // held before (4401) is tried again on a fresh link, as a user would open the new link again.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.openPage(true);
        return;
      } catch (error) {
        if (attempt === 3) throw error;
        this.launchUrl = await this.freshLaunchUrl();
      }
    }
  }

  /** The running service prints one link; a fresh one comes only with a restart, so restart it cleanly. */
  private async freshLaunchUrl(): Promise<string> {
    endChild(this.child!, "SIGTERM");
    await exited(this.child!);
    await this.start();
    return this.launchUrl;
  }

  /** Stops as Ctrl-C would, then closes the page and the browser. */
  async stop(): Promise<number | null> {
    this.bridge.close();
    await this.browser?.close();
    this.browser = undefined;
    const child = this.child;
    if (!child) return null;
    child.ending = true;
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGTERM");
    await exited(child);
    return child.process.exitCode;
  }
}

export const reportPathIn = (dir: string) => join(dir, "resource-report.json");
