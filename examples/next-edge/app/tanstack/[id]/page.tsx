// `/tanstack/:id`, rendered on the server: the seed of the page's connection (the session log's
// state and offset, so the page reads only what comes after it). The same session, routes and
// stores as the AI SDK page (`/chat/:id`): a chat started there opens here too.
import { notFound } from 'next/navigation';
import { resolveChatSnapshot } from 'turnkeep';

import { stores } from '../../../lib/stores';
import { TanStackChat, type Seed } from './tanstack';

export const dynamic = 'force-dynamic';

/** The demo signs everyone in as this user; a real app reads its session cookie here. */
const DEMO_USER = 'demo';
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!SAFE_ID.test(id)) notFound();
  const store = await stores();
  const log = await resolveChatSnapshot({ target: store.log(DEMO_USER, id) });
  const seed: Seed = { messages: log.messages, offset: log.offset, activeRunId: log.activeRunId };
  return <TanStackChat id={id} user={DEMO_USER} seed={seed} durable={store.kind === 'redis'} />;
}
