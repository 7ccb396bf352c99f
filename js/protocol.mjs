// The protocol constants AgentsKit Chat's protocol package exports, with the same names and
// values. Plain literals (an entry re-exports them before the wasm is instantiated); the rules
// that use them are the wasm core's, and tests/js/agentskit-compat.test.mjs checks that the
// core agrees with each value.
export const TURN_PROTOCOL = 'agentskit.chat.turn';
export const TURN_PROTOCOL_VERSION = 1;
export const SESSION_PROTOCOL = 'agentskit.chat.session';
export const SESSION_PROTOCOL_VERSION = 1;
export const COMPONENT_PROTOCOL = 'agentskit.chat.component';
export const COMPONENT_PROTOCOL_VERSION = 1;
export const ASSISTANT_CONTENT_PROTOCOL = 'agentskit.chat.content';
export const ASSISTANT_CONTENT_PROTOCOL_VERSION = 1;
export const ASSISTANT_CONTENT_PREFIX = `\u001e${ASSISTANT_CONTENT_PROTOCOL}/${ASSISTANT_CONTENT_PROTOCOL_VERSION}\n`;
export const ASSISTANT_CONTENT_MAX_BYTES = 262_144;
export const ASSISTANT_CONTENT_MAX_RECORDS = 512;

