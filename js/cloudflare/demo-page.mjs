// The demo chat page (GET /): one self-contained HTML file, no framework, no build step.
// wrangler (and Miniflare configured from wrangler.toml) imports `.html` as a Text module.
import DEMO_PAGE_HTML from './demo-page.html';

export { DEMO_PAGE_HTML };
