// `/tanstack`: a new TanStack AI chat.
import { redirect } from 'next/navigation';

export const dynamic = 'force-dynamic';

export default function Home() {
  redirect(`/tanstack/${crypto.randomUUID()}`);
}
