// GET /api/ui/chat/:id/stream: the running turn from its start (204 when none runs), for a
// resume. Mounts the one handler of lib/chat.ts.
import { chatRoute } from '../../../../../../lib/chat';

export const runtime = 'nodejs';

export const GET = chatRoute;
