// The `ChatSession` Durable Object: one per (tenant, session), SQLite-backed (declared in a
// `new_sqlite_classes` migration). A thin class shell: every method forwards to the Rust
// `ChatSessionStore` (src/cloudflare/store.rs), which runs it as one synchronous transaction on
// `ctx.storage.sql`. The Worker calls these methods over RPC through a stub (see storage.mjs).
import { DurableObject } from 'cloudflare:workers';
import { ChatSessionStore } from './wasm.mjs';

export class ChatSession extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.store = new ChatSessionStore(ctx.storage);
  }

  /** SessionStorage.load: the envelope as JSON text, or undefined when absent. */
  loadSession(sessionId) {
    return this.store.loadSession(sessionId);
  }

  /** SessionStorage.save: compare-and-set on the stored cursor; false on conflict. */
  saveSession(snapshot, expectedCursor) {
    return this.store.saveSession(snapshot, expectedCursor ?? null);
  }

  /** SessionStorage.delete: true when an envelope existed. */
  deleteSession(sessionId) {
    return this.store.deleteSession(sessionId);
  }

  /** ChatMemory.load: the canonical messages ([] when none). */
  loadMessages() {
    return this.store.loadMessages();
  }

  /** ChatMemory.save: replaces the conversation (validated; rows of at most 256 KiB). */
  saveMessages(messages) {
    this.store.saveMessages(messages);
  }

  /** Envelope and messages read in one step, so they are consistent with each other. */
  view(sessionId) {
    return { session: this.store.loadSession(sessionId) ?? null, messages: this.store.loadMessages() };
  }

  /** Row layout: { sessionRows, messageRows, rowBytesMax }. */
  stats() {
    return this.store.stats();
  }
}
