// `turnkeep/client`: what a page needs to show a durable chat (pkg-client/, feature `client`):
// the live connection, the one projection and its markup, the turn protocol. No chat handler,
// stores or logs: those are the server's (`turnkeep`). The functions call into wasm lazily, so
// importing them before instantiation is safe.

// The turn protocol, with AgentsKit Chat's signatures and result shapes (as in `turnkeep`).
export {
  version,
  decodeTurnEvent,
  encodeTurnEvent,
  createTurnSnapshotCursor,
  createSnapshotEvent,
  snapshotMessages,
  decodeComponentFrame,
  isComponentFrameCandidate,
  createSelectionEvent,
  createInteractionEvent,
  createAssistantContentEncoder,
  decodeAssistantContent,
  isAssistantContentCandidate,
} from '../../pkg-client/turnkeep.js';
export * from '../protocol.mjs';
import { checkAssistantContentPart } from '../../pkg-client/turnkeep.js';
import { assistantContentPartSchema } from '../content-part.mjs';
/** AgentsKit's `AssistantContentPartSchema`: `safeParse` / `parse` over the core's part rules. */
export const AssistantContentPartSchema = assistantContentPartSchema(checkAssistantContentPart);

// The one projection and its markup, the same reducer the server publishes with.
export { projectChatSnapshot, ChatProjection, renderChatHtml, renderChatMessages } from '../../pkg-client/turnkeep.js';

// The live connection (one SSE read per connection, shared by its readers; rules in Rust).
export { createChatConnection, ChatConnectionError, defaultStreamsAuth } from './connection.mjs';

// The AI SDK's ChatTransport over the live connection and the UI message stream routes, and the
// mapping it runs (the server's: UIMessage[] of a conversation, log chunks → UI chunks).
export { TurnkeepChatTransport } from './ui-transport.mjs';
export { toUIMessages, UIMessageChunkMapper, UIMessageStreamReader } from '../../pkg-client/turnkeep.js';

// TanStack AI's connection adapter over the live connection and the chat route's AG-UI runs,
// and the restore rules it performs (hydrate, joinRun).
export { toTanStackConnection } from './tanstack.mjs';
export { toTanStackHydration, TanStackRunJoin } from '../../pkg-client/turnkeep.js';
