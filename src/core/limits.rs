//! Every named limit in one place. Units are last in the name (`_ms`, `_bytes`, `_chars`...).
//! Limits that come from the AgentsKit Chat v1 wire contract are marked `wire`; changing
//! them breaks compatibility.

/// Largest integer a JavaScript number holds exactly (2^53 - 1). `wire`
pub const INTEGER_SAFE_MAX: u64 = 9_007_199_254_740_991;

/// SafeId: 1 to 128 characters of `[A-Za-z0-9._:-]`, first one alphanumeric. `wire`
pub const SAFE_ID_CHARS_MAX: usize = 128;

// ---- Bounded JSON (component props, interaction values, confirmation input). `wire`
pub const BOUNDED_JSON_NODES_MAX: usize = 1_000;
pub const BOUNDED_JSON_DEPTH_MAX: usize = 20;
pub const BOUNDED_JSON_STRING_UNITS_MAX: usize = 16_384;
pub const BOUNDED_JSON_ARRAY_ITEMS_MAX: usize = 1_000;
pub const BOUNDED_JSON_OBJECT_ENTRIES_MAX: usize = 1_000;
pub const BOUNDED_JSON_KEY_UNITS_MAX: usize = 256;

// ---- Message record structure (`{version: 1, messages}`), counted over the whole record. `wire`
pub const MESSAGE_RECORD_NODES_MAX: usize = 10_000;
pub const MESSAGE_RECORD_DEPTH_MAX: usize = 32;
pub const MESSAGE_RECORD_ARRAY_ITEMS_MAX: usize = 10_000;
pub const MESSAGE_RECORD_OBJECT_ENTRIES_MAX: usize = 10_000;
pub const MESSAGE_RECORD_KEY_UNITS_MAX: usize = 256;

// ---- Session envelope. `wire`
pub const TERMINAL_TURNS_MAX: usize = 64;
pub const CONFIRMATIONS_MAX: usize = 1_000;
pub const DECISIONS_MAX: usize = 1_000;
pub const DECISION_INPUT_CHARS_MAX: usize = 16_384;
pub const DECISION_CONTENT_CHARS_MAX: usize = 65_536;
pub const CONVERSATION_STATE_CHARS_MAX: usize = 128;
pub const CONFIRMATION_TTL_MS_DEFAULT: u64 = 300_000;
/// A proposal suffix: `confirm-<suffix>` must still be a SafeId. `wire`
pub const CONFIRMATION_SUFFIX_CHARS_MAX: usize = 120;
/// How much of an offending value a session decode detail quotes (logs only).
pub const SESSION_DETAIL_VALUE_CHARS_MAX: usize = 64;

// ---- Handler defaults. `wire` (defaults); all must be positive safe integers.
pub const BODY_BYTES_MAX_DEFAULT: u64 = 65_536;
pub const TURN_TIMEOUT_MS_DEFAULT: u64 = 30_000;
pub const CLEANUP_TIMEOUT_MS_DEFAULT: u64 = 5_000;
/// The lease outlives the whole turn plus three cleanup budgets (settle, save, release).
pub const fn lease_ms(turn_timeout_ms: u64, cleanup_timeout_ms: u64) -> u64 {
    turn_timeout_ms.saturating_add(cleanup_timeout_ms.saturating_mul(3))
}

// ---- Chat controller.
pub const TOOL_ITERATIONS_MAX_DEFAULT: u32 = 5;
