// `turnkeep/sandbox`: the MCP ui:// sandbox handler (pkg-sandbox/, feature `sandbox`).
export { createMcpSandboxHandler } from '../../pkg-sandbox/turnkeep.js';
export { toNodeHandler } from '../node-bridge.mjs';
