// Splitting markdown into top-level blocks, for rendering a growing text block by block.

/**
 * Top-level blocks of a markdown text: split at blank lines outside fenced code. A streaming reply
 * grows at its end, so every block but the last keeps its text and is not parsed again.
 */
export function markdownBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) fence = fence === null ? marker : null;
    if (fence === null && line.trim() === "" && current.length > 0) {
      blocks.push(current.join("\n"));
      current = [];
      continue;
    }
    if (current.length > 0 || line.trim() !== "") current.push(line);
  }
  if (current.length > 0) blocks.push(current.join("\n"));
  return blocks;
}
