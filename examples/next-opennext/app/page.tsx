// `GET /?session=<id>`: the chat of one session, rendered by Next in workerd (OpenNext); without
// a session, a redirect to a fresh one. The conversation itself is drawn in the browser (chat.tsx).
import { redirect } from 'next/navigation';

import { Chat } from './chat';

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export default async function Page({ searchParams }: { searchParams: Promise<{ session?: string | string[] }> }) {
  const { session } = await searchParams;
  if (typeof session !== 'string' || !SESSION_ID.test(session)) {
    redirect(`/?session=s-${crypto.randomUUID().slice(0, 8)}`);
  }
  return (
    <main>
      <h1>turnkeep on Cloudflare (Next.js, OpenNext)</h1>
      <Chat sessionId={session} />
    </main>
  );
}
