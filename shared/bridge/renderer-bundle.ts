// What the Electron app protocol and the headless shell both serve: the built renderer bundle.
// One table of content types for its files, so both shells label them alike (with nosniff, a
// wrong type would stop the page from loading).

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

/** The content type of a renderer bundle file by its extension (".js"); unknown kinds are opaque bytes. */
export function rendererContentType(extension: string): string {
  return CONTENT_TYPES[extension.toLowerCase()] ?? "application/octet-stream";
}
