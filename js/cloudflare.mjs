// `turnkeep/cloudflare` (workerd): turnkeep's Durable Objects and the chat routes over them, for
// a user's own Worker (README.md, "On Cloudflare: turnkeep/cloudflare"). The Worker re-exports
// the two classes under the names its wrangler.toml binds and hands requests to
// createCloudflareChat; or it builds its own handlers with the three ports.
export { ChatSession, SessionStream } from './durable-objects/objects.mjs';
export {
  createDurableObjectSessionStorage,
  createDurableObjectChatMemory,
  createDurableObjectSessionLog,
} from './durable-objects/ports.mjs';
export { createCloudflareChat } from './durable-objects/chat.mjs';
