// The open transcript while a reply streams into it: it keeps the newest words in view while the
// reader is at the bottom, and leaves a reader who scrolled up where they are
// (renderer/src/components/Transcript.tsx).
import type { Locator } from "@playwright/test";
import { agentRow, expect, test } from "./fixtures";

test.use({ generations: ["upstream"] });

/** How far the transcript's bottom is below its view, in px. */
const belowView = (transcript: Locator) => transcript.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight);

/**
 * The entry at the top of the transcript's view and how far below the view's top it starts, once it
 * held still for two frames. A jump into entries not yet measured settles first: the virtualizer
 * measures them and corrects the offset by their difference from its estimate
 * (renderer/src/components/Transcript.tsx).
 */
const entryAtTop = (transcript: Locator) =>
  transcript.evaluate(async (element) => {
    const read = () => {
      const top = element.getBoundingClientRect().top;
      const entry = [...element.querySelectorAll<HTMLElement>(".transcript-entry")].find((candidate) => candidate.getBoundingClientRect().bottom > top);
      return entry ? `${entry.textContent?.slice(0, 40)} at ${Math.round(entry.getBoundingClientRect().top - top)} px` : "none";
    };
    const frame = () => new Promise((done) => requestAnimationFrame(done));
    let last = read();
    for (let still = 0; still < 2;) {
      await frame();
      const now = read();
      still = now === last ? still + 1 : 0;
      last = now;
    }
    return last;
  });

test("a streaming reply stays in view at the bottom, and a reader who scrolled up is not moved", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  sim.agents.options.tokenStreaming = true;
  const threadId = fleet.sims.createThread(sim, { title: "Long history" });
  // More history than the view holds, appended as T3 stores it.
  for (let index = 0; index < 80; index++) {
    const at = sim.engine.now();
    sim.engine.append("thread", threadId, "thread.message-sent", "provider:seed", {
      threadId,
      messageId: `history-${index}`,
      role: index % 2 === 0 ? "user" : "assistant",
      text: `Message ${index}: please change module ${index} and run the tests again.`,
      turnId: "turn-history",
      streaming: false,
      createdAt: at,
      updatedAt: at,
    });
  }
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
  const transcript = page.getByTestId("transcript");
  await expect(transcript).toContainText("Message 79");
  await expect.poll(() => belowView(transcript)).toBeLessThanOrEqual(1);

  // A reply of 800 words, word by word (about 8 s): long enough to outgrow the view many times.
  const words = Array.from({ length: 800 }, (_, index) => `w${index}`).join(" ");
  fleet.sims.sendMessage(sim, threadId, words);
  const streaming = page.getByTestId("streaming-tail");
  await expect(streaming).toContainText("w100");
  // Followed: the newest words are in view as they arrive.
  for (const word of ["w150", "w250"]) {
    await expect(streaming).toContainText(word);
    await expect.poll(() => belowView(transcript)).toBeLessThanOrEqual(1);
  }

  // The reader scrolls up to read: the reply goes on growing below, and what they read stays where it is.
  await transcript.evaluate((element) => {
    element.scrollTop = 200;
    element.dispatchEvent(new Event("scroll"));
  });
  const reading = await entryAtTop(transcript);
  const grownBy = async (word: string) =>
    expect.poll(() => sim.engine.threads.get(threadId)!.messages.some((message) => message.text.includes(word))).toBe(true);
  await grownBy("w500");
  expect(await entryAtTop(transcript)).toEqual(reading);
  expect(await belowView(transcript)).toBeGreaterThan(500);

  // Back at the bottom, it follows again, and the finished reply stays in view.
  await transcript.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
  await grownBy("w799");
  await expect(page.getByTestId("streaming-tail")).toHaveCount(0, { timeout: 15_000 });
  await expect(transcript.getByTestId("message-assistant").last()).toContainText("w799");
  await expect.poll(() => belowView(transcript)).toBeLessThanOrEqual(1);
});

test("a long streaming paragraph settles its lines apart as it grows, and shows the lines the whole paragraph has, at any width", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  sim.agents.options.tokenStreaming = true;
  const threadId = fleet.sims.createThread(sim, { title: "Long paragraph" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
  // One paragraph of 900 words of uneven length, with code spans, so lines break at many places.
  const filler = ["a", "considerably", "of", "the", "refactoring", "`npm test`", "reads", "multi-threaded", "x"];
  const words = Array.from({ length: 900 }, (_, index) => (index % 7 === 3 ? filler[index % filler.length] : `w${index}`)).join(" ");
  // After a first paragraph: the long one is the reply's last block, not the whole reply.
  fleet.sims.sendMessage(sim, threadId, `Intro.\n\n${words}`);
  const tail = page.getByTestId("streaming-tail");

  /** The tail's lines against the same text laid out as one paragraph in its place. */
  const compare = () =>
    tail.evaluate((element) => {
      /** The words under `root` grouped by the line they show on (top edge), as laid out now. */
      const lines = (root: Element): string[] => {
        const range = document.createRange();
        const byTop = new Map<number, string[]>();
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
          for (const match of node.data.matchAll(/\S+/g)) {
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            const top = Math.round(range.getBoundingClientRect().top);
            byTop.set(top, [...(byTop.get(top) ?? []), match[0]]);
          }
        }
        return [...byTop.entries()].sort(([a], [b]) => a - b).map(([, words]) => words.join(" "));
      };
      const markdown = element.querySelector(".markdown-blocks > .markdown:last-child")!;
      const whole = markdown.cloneNode(false) as HTMLElement;
      const paragraph = document.createElement("p");
      // The same inline content as one paragraph: the settled paragraphs' and the growing one's children.
      for (const part of markdown.querySelectorAll(":scope > p")) {
        if (paragraph.childNodes.length > 0) paragraph.append(" ");
        paragraph.append(...[...part.childNodes].map((node) => node.cloneNode(true)));
      }
      whole.append(paragraph);
      markdown.after(whole);
      try {
        return {
          settled: markdown.querySelectorAll("[data-testid=settled-lines]").length,
          shown: lines(markdown),
          whole: lines(whole),
          // Settled paragraphs and the growing one read as one: a line ends where a space was.
          text: [...markdown.querySelectorAll(":scope > p")].map((part) => part.textContent).join(" "),
        };
      } finally {
        whole.remove();
      }
    });

  /** Words as the page shows them: code spans without their backticks, any run of spaces as one. */
  const asShown = (text: string) => text.replaceAll("`", "").replace(/\s+/g, " ").trim();
  for (const word of ["w200", "w400"]) {
    await expect(tail).toContainText(word);
    const { settled, shown, whole, text } = await compare();
    expect(settled, "lines settled as the paragraph grew").toBeGreaterThan(1);
    expect(shown).toEqual(whole);
    // Every word the agent wrote so far, once, in order: words shown as they arrive (StreamingReply.tsx) and those rendered agree.
    // The simulated agent replies "Codex reply to: " and the message (sim/protocol1/turn-scripts.ts): its first paragraph stays as it was.
    await expect(tail.locator(".markdown-blocks > .markdown").first()).toHaveText("Codex reply to: Intro.");
    const [expected, actual] = [asShown(words), asShown(text)];
    const differ = [...actual].findIndex((char, index) => char !== expected[index]);
    expect(
      differ,
      `shown "${actual.slice(Math.max(0, differ - 40), differ + 40)}" where the agent wrote "${expected.slice(Math.max(0, differ - 40), differ + 40)}"`,
    ).toBe(-1);
    expect(asShown(text)).toContain(word);
  }
  // Narrower: the paragraph is laid out whole again and settles afresh at the new width.
  await page.setViewportSize({ width: 900, height: 800 });
  await expect(tail).toContainText("w600");
  await expect.poll(async () => (await compare()).settled).toBeGreaterThan(1);
  const { shown, whole } = await compare();
  expect(shown).toEqual(whole);
  expect(shown.length).toBeGreaterThan(10);
});
