// The demo Worker's wasm: the Worker build (pkg-worker/, Cargo features `cloudflare` and
// `test-hooks`; see scripts/build.sh). It exports everything the npm package's build does plus
// the Durable Object stores, so the Worker loads one module, not the package's and its own.
// workerd hands a `.wasm` import over as a compiled WebAssembly.Module, so initSync is enough
// (Workers forbid compiling wasm from bytes at runtime).
import wasmModule from '../../pkg-worker/turnkeep_bg.wasm';
import { initSync } from '../../pkg-worker/turnkeep.js';

initSync({ module: wasmModule });

export {
  ChatSessionStore,
  createAskServiceHandler,
  createChatHandler,
  createDurableStreamsLog,
  createLocalRetriever,
  createMcpSandboxHandler,
  resolveChatSnapshot,
  SessionStreamCore,
  sessionStreamLimits,
} from '../../pkg-worker/turnkeep.js';
