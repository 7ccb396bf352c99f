// POST /api/ui/chat: a turn, as the AI SDK's transports send it (the user's message, a
// regeneration, or answered tool approvals). Every UI message stream route is the one handler of
// lib/chat.ts; each route file only mounts it.
import { chatRoute } from '../../../../lib/chat';

export const runtime = 'nodejs';

export const POST = chatRoute;
