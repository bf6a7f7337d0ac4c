// The WHATWG URL API exists in every runtime shared/ runs in (Node, Chromium, Electron), but it is
// declared by the DOM and Node type libraries, which shared/ must not depend on. Declare the part we use.
declare class URLSearchParams {
  constructor(init?: string | Record<string, string>);
  get(name: string): string | null;
  toString(): string;
}
declare class URL {
  constructor(input: string, base?: string | URL);
  static canParse(input: string, base?: string): boolean;
  hash: string;
  host: string;
  hostname: string;
  href: string;
  readonly origin: string;
  password: string;
  pathname: string;
  port: string;
  protocol: string;
  search: string;
  readonly searchParams: URLSearchParams;
  username: string;
  toString(): string;
}
/** Deep copy (HTML structured clone), available in Node 17+, Chromium and Electron. */
declare function structuredClone<T>(value: T): T;
