// A user's own Worker: turnkeep's two Durable Objects re-exported under the names wrangler.toml
// binds, the chat routes of createCloudflareChat, and one page (src/page.mjs).
import { createDemoModel } from 'turnkeep';
import { createCloudflareChat } from 'turnkeep/cloudflare';
import { page } from './page.mjs';

export { ChatSession, SessionStream } from 'turnkeep/cloudflare';

const BEARER = /^Bearer ([A-Za-z0-9][A-Za-z0-9._:-]{0,127})$/;

// A tool a person approves first (`/confirm 250`): the turn ends waiting, and the
// `client.confirmation.resolve` that wins runs it, once.
const transfer = {
  name: 'transfer',
  description: 'Moves money; a person approves it first.',
  parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
  requiresConfirmation: true,
  execute: async ({ amount }) => `transferred ${amount}`,
};

const chat = createCloudflareChat({
  // The demo's sign-in: `Authorization: Bearer <user>`; each user is a tenant of their own.
  // Replace with your own session check.
  authenticate: (request) => {
    const user = BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
    return user ? { ok: true, context: user } : { ok: false, response: Response.json({ error: 'sign in first' }, { status: 401 }) };
  },
  // The deterministic demo model (`/words N`, `/confirm N`, echo); any turnkeep model goes here.
  definition: { id: 'cloudflare-example', revision: 1, model: createDemoModel(), tools: [transfer] },
  onError: (error, info) => console.error('[cloudflare-example]', info.stage, error),
});

export default {
  async fetch(request, env, ctx) {
    const answer = await chat.handle(request, env, ctx);
    if (answer) return answer;
    const url = new URL(request.url);
    return url.pathname === '/' ? page(url) : new Response('Not found', { status: 404 });
  },
};
