// Thread content is untrusted. It is rendered as markdown (react-markdown + remark-gfm): raw HTML
// stays text, images are not fetched, and links are buttons that ask the bridge to open them
// (only parsed http(s) URLs; shared/bridge/contract.ts safeExternalUrl). Code is highlighted by one
// lazily loaded highlighter (./highlighter.ts); long blocks are folded. A message is parsed when its
// text changes (or a grammar it names arrives), never because something around it rendered.
import { Children, isValidElement, memo, type ReactNode, useState } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { safeExternalUrl } from "../../../shared/bridge/contract";
import { dispatch } from "../state/dispatch";
import { grammarsIn, rehypeLazyHighlight, useGrammars } from "./highlighter";
import { isPlainProse } from "./markdown-blocks";

/** Code blocks longer than this are folded behind "show all". */
export const FOLD_LINES = 18;

function textOf(node: ReactNode): string {
  if (typeof node === "string" || typeof node === "number") return String(node);
  if (Array.isArray(node)) return node.map(textOf).join("");
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children);
  return "";
}

export function Folded({ lines, children, what, limit = FOLD_LINES }: { lines: number; children: ReactNode; what: string; limit?: number }) {
  const [open, setOpen] = useState(false);
  if (lines <= limit) return <>{children}</>;
  return (
    <div className={`folded ${open ? "folded-open" : ""}`} data-testid="folded">
      {children}
      <button type="button" className="link fold-toggle" onClick={() => setOpen(!open)}>
        {open ? `Fold ${what}` : `Show all ${lines} lines`}
      </button>
    </div>
  );
}

const components: Components = {
  a: ({ href, children }) => {
    const url = href ? safeExternalUrl(href) : null;
    if (!url) return <span className="unsafe-link">{children}</span>;
    return (
      <button type="button" className="link" title={url} onClick={() => dispatch("link.open", "button", { url })}>
        {children}
      </button>
    );
  },
  img: ({ alt, src }) => {
    const url = src ? safeExternalUrl(String(src)) : null;
    const label = `image: ${alt || "untitled"}`;
    return url ? (
      <button type="button" className="link" title={url} onClick={() => dispatch("link.open", "button", { url })}>
        [{label}]
      </button>
    ) : (
      <span>[{label}]</span>
    );
  },
  pre: ({ children }) => {
    const lines = textOf(Children.toArray(children)).split("\n").length;
    return (
      <Folded lines={lines} what="code">
        <pre>{children}</pre>
      </Folded>
    );
  },
};

/** Longer texts are not parsed as markdown (parsing megabytes would freeze the window): plain text, cut. */
export const MARKDOWN_MAX_CHARS = 60_000;
/** How much of an overlong text shows before "show all". */
const PLAIN_PREVIEW_CHARS = 20_000;

export function LongText({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="markdown plain-text" data-testid="long-text">
      <p>{open ? text : `${text.slice(0, PLAIN_PREVIEW_CHARS)}…`}</p>
      <button type="button" className="link fold-toggle" onClick={() => setOpen(!open)}>
        {open ? "Show less" : `Show all ${text.length.toLocaleString("en")} characters`}
      </button>
    </div>
  );
}

const REMARK_PLUGINS = [remarkGfm];
const REHYPE_PLUGINS = [rehypeLazyHighlight];

/** Renders again only when `text` changes (memo) or a grammar its code blocks name finishes loading. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  if (text.length > MARKDOWN_MAX_CHARS) return <LongText text={text} />;
  if (isPlainProse(text))
    return (
      <div className="markdown">
        <p>{text.trimEnd()}</p>
      </div>
    );
  return <ParsedMarkdown text={text} />;
});

/** Inline content only: the pieces of one paragraph share a paragraph element (StreamingMarkdown.tsx). */
const INLINE_COMPONENTS: Components = { ...components, p: ({ children }) => <>{children}</> };

/** One piece of a paragraph as inline markdown; parsed again only when its text changes. */
export const InlineMarkdown = memo(function InlineMarkdown({ text }: { text: string }) {
  if (isPlainProse(text)) return <>{text.trimEnd()}</>;
  return (
    <ReactMarkdown remarkPlugins={REMARK_PLUGINS} rehypePlugins={REHYPE_PLUGINS} components={INLINE_COMPONENTS}>
      {text}
    </ReactMarkdown>
  );
});

function ParsedMarkdown({ text }: { text: string }) {
  useGrammars(grammarsIn(text));
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={REMARK_PLUGINS} rehypePlugins={REHYPE_PLUGINS} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
}
