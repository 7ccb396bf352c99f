// defineChat (README.md, "Models"): the one definition reader is Rust's (src/web/chat/definition.rs, the
// option tables in src/core/chat/definition.rs), so a definition is checked by the same rules
// when the host builds it (a bad one throws `code: 'SERVER_INVALID_CONFIG'` naming the option,
// at deploy time instead of on the first turn) and when a handler resolves it.
import { readChatDefinition } from '../pkg/turnkeep.js';

/**
 * A chat definition: what `resolveDefinition(context)` returns to `createChatHandler`.
 * turnkeep's shape `{ id, revision?, model, memory, tools?, maxToolIterations?, initialMessages?,
 * conversation?, instructions?, temperature?, maxOutputTokens?, topP?, stopSequences?,
 * toolChoice?, providerOptions? }` or AgentsKit Chat's `{ id, revision?, chat: { adapter, memory,
 * ... } }`.
 * @returns the options, frozen (turnkeep's shape with `tools`, `maxToolIterations` and
 *   `initialMessages` as read)
 * @throws Error with `code: 'SERVER_INVALID_CONFIG'` naming the first bad option
 */
export function defineChat(options) {
  return readChatDefinition(options);
}
