// The Ask path on Node, measured side by side in one run (not a test): the built-in BM25
// retriever over the shipped docs corpus (1 and 3 sources per query) and a whole
// createAskServiceHandler request around it (stub generator, so the handler's own cost shows).
// Run after `npm run build`: node bench/ask.mjs
import { createAskServiceHandler, createLocalRetriever } from '../js/ask/node.mjs';
import { docsCorpus } from '../scripts/docs-corpus.mjs';

const docs = docsCorpus();
const QUESTIONS = ['How do I run the tests?', 'Where is the session stored?', 'How are snapshot sequences derived?', 'What does the sandbox CSP allow?'];
const site = (maxSources) => ({
  protocol: 'agentskit.chat.backend-site', version: 1, siteId: 'bench',
  assistant: { id: 'guide', name: 'Guide', suggestions: [] }, corpus: { id: 'docs', mode: 'local' },
  components: [], actions: [], persistence: { mode: 'disabled' },
  limits: { requestTimeoutMs: 5_000, retrievalTimeoutMs: 1_000, generationTimeoutMs: 5_000, maxSources },
});

/** Mean microseconds per call of `f` over `n` calls, after a warm-up. */
async function micros(f, n) {
  for (let i = 0; i < 200; i++) await f(i);
  const start = performance.now();
  for (let i = 0; i < n; i++) await f(i);
  return ((performance.now() - start) / n) * 1000;
}

const buildMs = (await micros(() => createLocalRetriever({ corpusId: 'docs', documents: docs }), 20)) / 1000;
const retriever = createLocalRetriever({ corpusId: 'docs', documents: docs });
const one = await micros((i) => retriever.retrieve({ query: QUESTIONS[i % 4], site: site(1) }), 3_000);
const three = await micros((i) => retriever.retrieve({ query: QUESTIONS[i % 4], site: site(3) }), 3_000);
const handler = createAskServiceHandler({
  authenticate: () => ({ ok: true, context: {} }),
  resolveSite: () => site(3),
  resolveSubjectId: () => 'bench',
  retrievers: { local: retriever },
  generator: { async *generate() { yield { type: 'text', delta: 'answer' }; } },
});
const body = (i) => JSON.stringify({ messages: [{ role: 'user', content: QUESTIONS[i % 4] }] });
const request = await micros(async (i) => {
  const response = await handler(new Request('http://bench/ask', { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(i) }));
  await response.text();
}, 2_000);

const chars = docs.reduce((n, d) => n + d.text.length, 0);
console.log(`corpus: ${docs.length} sections, ${chars} characters; index build ${buildMs.toFixed(2)} ms`);
console.log(`retrieve, 1 source:  ${one.toFixed(0)} µs`);
console.log(`retrieve, 3 sources: ${three.toFixed(0)} µs  (${(three / one).toFixed(2)}x one source)`);
console.log(`whole Ask request:   ${request.toFixed(0)} µs  (${(request / three).toFixed(2)}x its retrieval)`);
