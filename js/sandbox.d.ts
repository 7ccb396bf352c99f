// Types of `turnkeep/sandbox`: the MCP ui:// sandbox handler.
export { toNodeHandler } from './index.js';

// ---- MCP ui:// sandbox ----

/** What `resolveResource` returns: the HTML body, or the body with the origins it needs. */
export type McpSandboxResource =
  | string
  | {
      body: string;
      /** MCP Apps CSP lists: origins like `https://cdn.example.com`. Nothing else is allowed. */
      csp?: { resourceDomains?: string[]; connectDomains?: string[]; frameDomains?: string[]; baseUriDomains?: string[] };
    };

export interface McpSandboxHandlerOptions {
  /** Receives the request's own signal. `null`/`undefined` is 404. */
  resolveResource(
    uri: string,
    context: { request: Request; signal: AbortSignal },
  ): McpSandboxResource | null | undefined | Promise<McpSandboxResource | null | undefined>;
  /** Token sets by theme name; only `--ns-*` tokens are injected. */
  themes?: Record<string, Record<string, string>>;
  /** The theme for an absent or unknown `?theme=`, default `'default'`. */
  defaultThemeName?: string;
  /** The cause of a failure (for logs; never sent to the client). */
  onError?(report: { code: string; cause: string }): void;
}

/** Throws an Error with `code: 'SANDBOX_INVALID_CONFIG'` for bad options. */
export function createMcpSandboxHandler(options: McpSandboxHandlerOptions): (request: Request) => Promise<Response>;
