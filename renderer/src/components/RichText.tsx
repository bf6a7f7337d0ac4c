// Thread content is untrusted: it is rendered as text. Code fences become <pre>, and http(s) URLs
// become buttons that ask the bridge to open them. No HTML from a thread ever reaches the DOM.
import { Fragment } from "react";
import { commands } from "../state/effects";

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"')\]]+/g;

function Linkified({ text }: { text: string }) {
  const parts: (string | { url: string })[] = [];
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    parts.push(text.slice(last, match.index));
    parts.push({ url: match[0] });
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return (
    <>
      {parts.map((part, i) =>
        typeof part === "string" ? (
          <Fragment key={i}>{part}</Fragment>
        ) : (
          <button key={i} type="button" className="link" onClick={() => void commands.openLink(part.url)}>
            {part.url}
          </button>
        ),
      )}
    </>
  );
}

export function RichText({ text }: { text: string }) {
  const blocks = text.split(/```/);
  return (
    <div className="rich-text">
      {blocks.map((block, i) =>
        i % 2 === 1 ? (
          <pre key={i}>{block.replace(/^[a-z]*\n/, "")}</pre>
        ) : (
          <p key={i}>
            <Linkified text={block} />
          </p>
        ),
      )}
    </div>
  );
}
