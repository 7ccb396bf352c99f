// GET /api/ui/log/:id: the session's log (in Redis, or memory) over the Durable Streams read
// protocol, what the page's createChatConnection reads (lib/chat.ts).
import { handleLog } from '../../../../../lib/chat';

export const runtime = 'nodejs';

export const GET = handleLog;
export const HEAD = handleLog;
