// The Node server the TanStack suites run against (tests/js/tanstack-connection and
// tanstack-durable-transport): createUIMessageChatHandler at /api/chat (and its
// `/:id/...` routes) and createSessionLogHandler at /api/log/:id, over memory session logs,
// one per session, with the demo model and a `transfer` tool that asks a person first.
// Plus what both suites read TanStack's client with.
import { createServer } from 'node:http';

import * as pkg from '../../js/node.mjs';

const {
  createUIMessageChatHandler, createSessionLogHandler, createDemoModel, createMemoryChatMemory,
  createMemorySessionLog, createMemorySessionStorage, defineChat, toNodeHandler,
} = pkg;

/**
 * Starts the server. `onTransfer(args, context)` hears every execution of the transfer tool.
 * Returns `{ base, session(id), pending, close() }`: `session(id)` is the session's
 * `{ memory, log }`, `pending` the turns the handler handed to `waitUntil`.
 */
export async function startTanStackServer({ chunkDelayMs, onTransfer = () => {} }) {
  const sessions = new Map();
  const pending = [];
  const session = (id) => {
    if (!sessions.has(id)) sessions.set(id, { memory: createMemoryChatMemory(), log: createMemorySessionLog() });
    return sessions.get(id);
  };
  const transfer = {
    name: 'transfer',
    description: 'Moves money; a person approves it first.',
    parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
    requiresConfirmation: true,
    async execute(args, context) {
      onTransfer(args, context);
      return `transferred ${args.amount}`;
    },
  };
  const storage = createMemorySessionStorage();
  const chat = createUIMessageChatHandler({
    resolveDefinition: (_c, id) => defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs }), memory: session(id).memory, tools: [transfer] }),
    sessionStorage: () => storage,
    sessionLog: (_c, id) => session(id).log,
  });
  const logs = createSessionLogHandler({
    log: (request) => session(decodeURIComponent(new URL(request.url).pathname.split('/').pop())).log,
    sseMs: 2_000,
  });
  const host = { waitUntil: (p) => pending.push(p) };
  const chatNode = toNodeHandler((r) => chat(r, host));
  const logNode = toNodeHandler(logs);
  const server = createServer((req, res) => (req.url.startsWith('/api/log/') ? logNode(req, res) : chatNode(req, res)));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    session,
    pending,
    async close() {
      await Promise.allSettled(pending);
      server.close();
      server.closeAllConnections?.();
    },
  };
}

/** A TanStack UI message's text. */
export const textOf = (message) => (message?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.content).join('');

/** The first tool-call part a TanStack client holds. */
export const toolPart = (client) => client.getMessages().flatMap((m) => m.parts).find((p) => p.type === 'tool-call');

/** Polls `predicate` every 10 ms; throws after `timeoutMs`. */
export async function waitFor(predicate, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${predicate}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
