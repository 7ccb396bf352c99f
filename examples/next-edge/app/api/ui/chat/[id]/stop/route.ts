// POST /api/ui/chat/:id/stop: stops whatever turn runs in the chat, from any tab. Mounts the
// one handler of lib/chat.ts.
import { chatRoute } from '../../../../../../lib/chat';

export const runtime = 'nodejs';

export const POST = chatRoute;
