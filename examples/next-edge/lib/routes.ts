// The chat page's routes, known to the server (lib/chat.ts) and the page alike.

/** The UI message stream routes (app/api/ui/chat/...): POST a turn, :id/stream, :id/stop, :id/messages. */
export const CHAT_API = '/api/ui/chat';
/** A session's log for the page's createChatConnection (app/api/ui/log/[id]). */
export const LOG_API = '/api/ui/log';
