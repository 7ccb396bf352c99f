// The two Durable Object classes `turnkeep/cloudflare` exports: the Rust `ChatSession` (the
// session envelope's compare-and-set and the canonical messages, src/cloudflare/chat_session.rs)
// and `SessionStream` (a Durable Streams log with producer fencing, src/cloudflare/streams/),
// from the Worker build (pkg-worker/, the module the demo Worker deploys; ARCHITECTURE.md, "The
// Worker build"). Every rule of theirs is Rust; nothing here decides.
//
// Its own module so that a Worker that needs only the objects (the demo Worker) loads only
// their wasm, not the chat server's (pkg/) too.
import wasmModule from '../../pkg-worker/turnkeep_bg.wasm';
import { ChatSessionObject, initSync, SessionStreamObject } from '../../pkg-worker/turnkeep.js';
import { bindObjects } from './classes.mjs';

export const { ChatSession, SessionStream } = bindObjects({ initSync, ChatSessionObject, SessionStreamObject }, wasmModule);
