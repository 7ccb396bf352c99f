// A turnkeep chat endpoint as a Next.js App Router route on the edge runtime.
// `import 'turnkeep'` resolves to the package's `edge-light` entry here, which hands Next's
// bundler the wasm as a precompiled module (edge runtimes refuse to compile wasm from bytes).
import {
  createChatHandler,
  createDemoModel,
  createMemoryChatMemory,
  createMemorySessionStorage,
  defineChat,
  type ChatDefinition,
} from 'turnkeep';

export const runtime = 'edge';

// In memory, per isolate: NOT durable, for this example only. A deployment passes its database
// here: a SessionStorage is `{ load(sessionId), save(snapshot, expectedCursor) }` with atomic
// compare-and-set, and a ChatMemory is `{ load({ signal }), save(messages, { signal }) }`.
const sessions = createMemorySessionStorage();
const definitions = new Map<string, ChatDefinition>();
const model = createDemoModel(); // deterministic, no network: `/words N`, `/tool Q`, echo

function chatFor(user: string, sessionId: string): ChatDefinition {
  const key = `${user}/${sessionId}`;
  let definition = definitions.get(key);
  if (!definition) {
    definition = defineChat({ id: 'demo', revision: 1, model, memory: createMemoryChatMemory() });
    definitions.set(key, definition);
  }
  return definition;
}

const handleChat = createChatHandler<string>({
  // Runs before the body is read. Replace with your own session or token check.
  authenticate: (request) => {
    const user = /^Bearer ([A-Za-z0-9][A-Za-z0-9._:-]{0,127})$/.exec(request.headers.get('authorization') ?? '')?.[1];
    return user
      ? { ok: true, context: user }
      : { ok: false, response: Response.json({ error: 'sign in first' }, { status: 401 }) };
  },
  resolveDefinition: (user, sessionId) => chatFor(user, sessionId),
  sessionStorage: () => sessions,
});

export const POST = (request: Request) => handleChat(request);
