// GET /api/ui/chat/:id/messages: `{ messages: UIMessage[] }`, the conversation for a first
// paint. Mounts the one handler of lib/chat.ts.
import { chatRoute } from '../../../../../../lib/chat';

export const runtime = 'nodejs';

export const GET = chatRoute;
