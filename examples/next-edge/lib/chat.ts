// The chat page's server side, shared by its route files (app/api/ui/...): the AI SDK UI message
// stream handler (createUIMessageChatHandler: POST a turn, GET :id/stream, POST :id/stop,
// GET :id/messages), the session log served to the page's createChatConnection
// (createSessionLogHandler), and the demo user check both run first.
import { after } from 'next/server';
import {
  createDemoModel,
  createSessionLogHandler,
  createUIMessageChatHandler,
  defineChat,
  type ChatTool,
} from 'turnkeep';

import { stores } from './stores';

const BEARER = /^Bearer ([A-Za-z0-9][A-Za-z0-9._:-]{0,127})$/;
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The demo's sign-in: `Authorization: Bearer <user>`. Replace with your own session check. */
export function userOf(request: Request): string | undefined {
  return BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
}

const signIn = () => Response.json({ error: 'sign in first' }, { status: 401 });
const model = createDemoModel(); // deterministic, no network: `/words N`, `/tool Q`, `/confirm N`, echo

function tools(user: string): ChatTool[] {
  return [
    {
      name: 'lookup',
      description: 'Looks a thing up.',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
      execute: async ({ query }) => `result for ${String(query)}`,
    },
    {
      name: 'transfer',
      description: 'Moves money; a person approves it first.',
      parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
      requiresConfirmation: true,
      // The side effect the approval guards: one ledger entry per execution. The idempotency
      // key (the approval's token) is what a real payment API would be given.
      execute: async ({ amount }, { idempotencyKey }) => {
        await (await stores()).recordTransfer(user, { amount: Number(amount), idempotencyKey: idempotencyKey ?? null });
        return `transferred ${String(amount)}`;
      },
    },
  ];
}

export const handleChat = createUIMessageChatHandler<string>({
  // Runs before a byte of the body is read.
  authenticate: (request) => {
    const user = userOf(request);
    return user ? { ok: true, context: user } : { ok: false, response: signIn() };
  },
  resolveDefinition: async (user, sessionId) =>
    defineChat({ id: 'next-example', revision: 1, model, memory: (await stores()).memory(user, sessionId), tools: tools(user) }),
  sessionStorage: async (user) => (await stores()).sessionStorage(user),
  // With a session log a turn outlives its request: a reload, another tab or a stop from
  // anywhere find it there.
  sessionLog: async (user, sessionId) => (await stores()).log(user, sessionId),
  onError: (error, info) => console.error('[next-example]', info.stage, error),
});

/** A route's handler: the turn keeps running after the response (Next's `after`). */
export const chatRoute = (request: Request) => handleChat(request, { waitUntil: (running) => after(running) });

export const handleLog = createSessionLogHandler({
  log: async (request) => {
    const user = userOf(request);
    if (!user) return signIn();
    const sessionId = decodeURIComponent(new URL(request.url).pathname.split('/').at(-1) ?? '');
    // Not a session id: no such log (the handler answers its 404 diagnostic).
    return SAFE_ID.test(sessionId) ? (await stores()).log(user, sessionId) : undefined;
  },
  onError: (error) => console.error('[next-example] session log', error),
});
