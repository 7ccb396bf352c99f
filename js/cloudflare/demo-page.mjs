// The demo chat page (GET /?session=<id>[&panes=3]), rendered on the server: the conversation is
// in the HTML before any script runs. The template is one self-contained HTML file
// (demo-page.html; wrangler, and Miniflare configured from wrangler.toml, import `.html` as a
// Text module); its client script is the static asset /demo/page.mjs (demo/page.mjs).
import DEMO_PAGE_HTML from './demo-page.html';
import { renderChatHtml } from '../workerd.mjs';

/** Panes the page may show: one, or three readers of the same session over one stream read. */
export const PANE_COUNTS = Object.freeze([1, 3]);

/**
 * The page for `tenant`'s session `sessionId` (both SafeIds, checked by the caller), with
 * `snapshot` (resolveChatSnapshot of the session's stream) drawn by the wasm renderer into each
 * of `panes` panes, and the seed the page's live connection continues from.
 */
export function renderDemoPage({ tenant, sessionId, panes, snapshot }) {
  const conversation = renderChatHtml(snapshot.renderParts);
  const paneHtml = Array.from(
    { length: panes },
    (_, i) =>
      `  <section class="pane" data-pane="${i + 1}"><div class="pane-title">pane ${i + 1} · its own reader</div>` +
      `<div class="messages">${conversation}</div></section>`,
  ).join('\n');
  const running = snapshot.activeRunId !== null;
  const session = encodeURIComponent(sessionId);
  // Only SafeIds and fixed strings go into the markup; the seed is JSON with `<` escaped.
  const slots = {
    TENANT: tenant,
    SESSION_ID: sessionId,
    PANES: paneHtml,
    PANE_COUNT: String(panes),
    PANES_HREF: panes === 1 ? `/?session=${session}&amp;panes=3` : `/?session=${session}`,
    PANES_LABEL: panes === 1 ? 'Three panes' : 'One pane',
    PANES_QUERY: panes === 1 ? '' : '?panes=3',
    EMPTY_HIDDEN: snapshot.messages.length > 0 ? ' hidden' : '',
    STOP_DISABLED: running ? '' : ' disabled',
    RUN_STATUS: running ? 'streaming' : 'idle',
    RUN_CLASS: running ? ' streaming' : '',
    SEED_JSON: JSON.stringify({
      sessionId,
      offset: snapshot.offset,
      activeRunId: snapshot.activeRunId,
      messages: snapshot.messages,
    }).replace(/</g, '\\u003c'),
  };
  return DEMO_PAGE_HTML.replace(/\{\{([A-Z_]+)\}\}/g, (_, name) => slots[name]);
}
