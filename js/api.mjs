// `turnkeep`: the chat server's JS surface (pkg/, feature `server`), shared by every entry point
// (node, browser, edge-light, workerd). Each entry point instantiates the wasm module its own
// way, then re-exports this module. The browser client is `turnkeep/client`; the Ask service and
// the MCP sandbox are `turnkeep/ask` and `turnkeep/sandbox`, each with its own wasm.
// The functions call into wasm lazily, so importing them before instantiation is safe.

// The turn and session protocol, with AgentsKit Chat's signatures and result shapes.
export {
  version,
  decodeTurnEvent,
  encodeTurnEvent,
  createTurnSnapshotCursor,
  createSnapshotEvent,
  snapshotMessages,
  decodeSessionSnapshot,
  resumeChatSession,
  createMemorySessionStorage,
  MemorySessionStorage,
} from '../pkg/turnkeep.js';

// Component frames and the ordered assistant content envelope (AgentsKit Chat's protocol package).
export {
  decodeComponentFrame,
  isComponentFrameCandidate,
  createSelectionEvent,
  createInteractionEvent,
  createAssistantContentEncoder,
  decodeAssistantContent,
  isAssistantContentCandidate,
} from '../pkg/turnkeep.js';
export * from './protocol.mjs';
import { checkAssistantContentPart } from '../pkg/turnkeep.js';
import { assistantContentPartSchema } from './content-part.mjs';
/** AgentsKit's `AssistantContentPartSchema`: `safeParse` / `parse` over the core's part rules. */
export const AssistantContentPartSchema = assistantContentPartSchema(checkAssistantContentPart);

// The chat handler (Rust, over Web Request/Response/ReadableStream), and the same pipeline
// speaking the AI SDK's UI message stream (`useChat`'s stock DefaultChatTransport).
export { createChatHandler, createUIMessageChatHandler, createMemoryChatMemory } from '../pkg/turnkeep.js';

// Durable chat: session logs, the one projection and the SSR seed.
export {
  createMemorySessionLog,
  MemorySessionLog,
  createDurableStreamsLog,
  DurableStreamsLog,
  createStoreSessionLog,
  StoreSessionLog,
  projectChatSnapshot,
  ChatProjection,
  resolveChatSnapshot,
  toChatResponse,
  renderChatHtml,
  renderChatMessages,
  toUIMessages,
  toTanStackHydration,
} from '../pkg/turnkeep.js';
export { ChatProducerError } from './errors.mjs';

// The chat-stream proxy a browser reads its session's stream through (Rust); the browser's side
// (createChatConnection) is `turnkeep/client`.
export { createChatStreamProxy } from '../pkg/turnkeep.js';
// A session log in the host's own database served over the Durable Streams read protocol, for
// the browser's createChatConnection (no streams server needed).
export { createSessionLogHandler } from '../pkg/turnkeep.js';

// Chat definitions (the Rust reader) and model descriptors (plain JS), checked at definition time.
export { defineChat } from './define.mjs';
export { createDemoModel, createOpenAICompatibleModel } from './chat.mjs';

// The node:http bridge (no imports of its own, so every entry can carry it; useful in Node).
export { toNodeHandler } from './node-bridge.mjs';
