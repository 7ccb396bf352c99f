// POST /api/ask for the demo Worker: createAskServiceHandler over turnkeep's own docs
// (README and ARCHITECTURE by section, js/cloudflare/docs-corpus.mjs) with the built-in BM25
// retriever, and the Worker's chat model (the demo model, or OPENAI_BASE_URL's) as generator.
// Authentication is the demo's `Authorization: Bearer <tenant>`; the tenant is the subject.
import { createAskServiceHandler, createLocalRetriever } from '../workerd.mjs';
import DOCS_CORPUS from './docs-corpus.mjs';

/** The trusted site policy: the client may only name it (`?corpus=turnkeep-docs`), not pick another. */
export const DEMO_ASK_SITE = Object.freeze({
  protocol: 'agentskit.chat.backend-site',
  version: 1,
  siteId: 'turnkeep-demo',
  assistant: { id: 'docs-guide', name: 'turnkeep docs', suggestions: ['How do I run the tests?', 'Where is the session stored?'] },
  corpus: { id: 'turnkeep-docs', mode: 'local' },
  components: [],
  actions: [],
  limits: { requestTimeoutMs: 20_000, retrievalTimeoutMs: 2_000, generationTimeoutMs: 15_000, maxSources: 3 },
  persistence: { mode: 'disabled' },
  // Citations may link to this site's own pages only.
  citations: { origins: [] },
});

let retriever;
const handlers = new WeakMap();

/** One handler per `env`; `modelFromEnv(env)` is the Worker's chat model. */
export function demoAskHandler(env, { authenticate, modelFromEnv }) {
  let handler = handlers.get(env);
  if (!handler) {
    retriever ??= createLocalRetriever({ corpusId: DEMO_ASK_SITE.corpus.id, documents: DOCS_CORPUS });
    handler = createAskServiceHandler({
      authenticate,
      resolveSite: () => DEMO_ASK_SITE,
      resolveSubjectId: ({ tenant }) => tenant,
      retrievers: { local: retriever },
      generator: modelFromEnv(env),
      onError: (report) => console.error('POST /api/ask failed:', report),
    });
    handlers.set(env, handler);
  }
  return handler;
}
