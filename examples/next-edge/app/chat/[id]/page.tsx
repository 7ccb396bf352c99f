// `/chat/:id`, rendered on the server: the conversation so far (the handler's own
// `GET /api/ui/chat/:id/messages`, so the first paint is the HTML) and the seed of the page's
// connection (the session log's state and offset, so the page reads only what comes after).
import { notFound } from 'next/navigation';
import { resolveChatSnapshot, type UIMessage } from 'turnkeep';

import { handleChat } from '../../../lib/chat';
import { CHAT_API } from '../../../lib/routes';
import { stores } from '../../../lib/stores';
import { ChatPage, type Seed } from './chat';

export const dynamic = 'force-dynamic';

/** The demo signs everyone in as this user; a real app reads its session cookie here. */
const DEMO_USER = 'demo';
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!SAFE_ID.test(id)) notFound();
  const store = await stores();
  // The seed first: messages the page shows later can only be newer than it.
  const log = await resolveChatSnapshot({ target: store.log(DEMO_USER, id) });
  const seed: Seed = { messages: log.messages, offset: log.offset, activeRunId: log.activeRunId };
  const response = await handleChat(
    new Request(`http://localhost${CHAT_API}/${id}/messages`, { headers: { authorization: `Bearer ${DEMO_USER}` } }),
  );
  if (!response.ok) throw new Error(`the conversation could not be read (${response.status}): ${await response.text()}`);
  const { messages } = (await response.json()) as { messages: UIMessage[] };
  return <ChatPage id={id} user={DEMO_USER} initialMessages={messages} seed={seed} durable={store.kind === 'redis'} />;
}
