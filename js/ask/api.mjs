// `turnkeep/ask`: the Ask service (cited retrieval, AgentsKit-compatible) and its built-in BM25
// retriever (pkg-ask/, feature `ask`), plus the model descriptors it answers with (plain JS).
export { createAskServiceHandler, createLocalRetriever, LocalRetriever } from '../../pkg-ask/turnkeep.js';
export { createDemoModel, createOpenAICompatibleModel } from '../chat.mjs';
export { toNodeHandler } from '../node-bridge.mjs';
