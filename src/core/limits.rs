//! Every named limit in one place. Units are last in the name (`_ms`, `_bytes`, `_chars`...).
//! Limits that come from the AgentsKit Chat v1 wire contract are marked `wire`; changing
//! them breaks compatibility.

/// Largest integer a JavaScript number holds exactly (2^53 - 1). `wire`
pub const INTEGER_SAFE_MAX: u64 = 9_007_199_254_740_991;

/// SafeId: 1 to 128 characters of `[A-Za-z0-9._:-]`, first one alphanumeric. `wire`
pub(crate) const SAFE_ID_CHARS_MAX: usize = 128;

// ---- Bounded JSON (component props, interaction values, confirmation input). `wire`
pub(crate) const BOUNDED_JSON_NODES_MAX: usize = 1_000;
pub(crate) const BOUNDED_JSON_DEPTH_MAX: usize = 20;
pub(crate) const BOUNDED_JSON_STRING_UNITS_MAX: usize = 16_384;
pub(crate) const BOUNDED_JSON_ARRAY_ITEMS_MAX: usize = 1_000;
pub(crate) const BOUNDED_JSON_OBJECT_ENTRIES_MAX: usize = 1_000;
pub(crate) const BOUNDED_JSON_KEY_UNITS_MAX: usize = 256;

// ---- JS objects handed to the protocol exports (`decodeTurnEvent({...})`, `cursor.apply`, ...),
// walked value by value (src/web/strict_json.rs). JSON text has serde_json's own depth limit (128).
/// Nesting depth; matches serde_json's limit for text, far above any valid event (33).
pub const JS_INPUT_DEPTH_MAX: usize = 128;
/// Values visited in one input: ten times a message record's cap, so every valid turn event
/// fits, while a hostile object graph (shared subtrees, cycles) stops after bounded work.
/// Larger stored session envelopes can be passed as JSON text.
pub const JS_INPUT_NODES_MAX: usize = 100_000;
/// Property names kept as JS strings by the web shell (`web::js::key`): its own literals, a few
/// dozen; the bound only stops a name built at run time from growing the table.
pub const JS_KEYS_INTERNED_MAX: usize = 512;
/// Idle `then` callback pairs the web shell keeps for its next awaits (`web::js::settled`): as
/// many as were pending at once, up to this; beyond it a finished pair is let go.
pub const JS_SETTLERS_IDLE_MAX: usize = 256;

// ---- Component frames and the assistant content envelope (`agentskit.chat.component` v1,
// `agentskit.chat.content` v1). `wire`
/// A component key or an interaction event name: `^[a-z][a-z0-9-]{0,63}$`.
pub(crate) const COMPONENT_NAME_CHARS_MAX: usize = 64;
pub(crate) const COMPONENT_FALLBACK_KIND_CHARS_MAX: usize = 64;
pub(crate) const COMPONENT_FALLBACK_SUMMARY_CHARS_MAX: usize = 4_096;
/// One text part of an assistant content envelope, in UTF-16 units.
pub(crate) const ASSISTANT_CONTENT_TEXT_UNITS_MAX: usize = 16_384;
/// A whole assistant content envelope, in UTF-8 bytes.
pub(crate) const ASSISTANT_CONTENT_ENVELOPE_BYTES_MAX: usize = 262_144;
pub(crate) const ASSISTANT_CONTENT_RECORDS_MAX: usize = 512;

// ---- Message record structure (`{version: 1, messages}`), counted over the whole record. `wire`
pub(crate) const MESSAGE_RECORD_NODES_MAX: usize = 10_000;
pub(crate) const MESSAGE_RECORD_DEPTH_MAX: usize = 32;
pub(crate) const MESSAGE_RECORD_ARRAY_ITEMS_MAX: usize = 10_000;
pub(crate) const MESSAGE_RECORD_OBJECT_ENTRIES_MAX: usize = 10_000;
pub(crate) const MESSAGE_RECORD_KEY_UNITS_MAX: usize = 256;

// ---- Session envelope. `wire`
pub const TERMINAL_TURNS_MAX: usize = 64;
pub const CONFIRMATIONS_MAX: usize = 1_000;
pub(crate) const DECISIONS_MAX: usize = 1_000;
pub(crate) const DECISION_INPUT_CHARS_MAX: usize = 16_384;
pub(crate) const DECISION_CONTENT_CHARS_MAX: usize = 65_536;
pub(crate) const CONVERSATION_STATE_CHARS_MAX: usize = 128;
/// A definition's conversation statechart (checked when the definition is read).
pub(crate) const CONVERSATION_STATES_MAX: usize = 256;
pub(crate) const CONVERSATION_ROUTES_MAX: usize = 256;
pub(crate) const CONVERSATION_EVENTS_PER_STATE_MAX: usize = 256;
pub(crate) const CONVERSATION_EVENT_CHARS_MAX: usize = 128;
pub const CONFIRMATION_TTL_MS_DEFAULT: u64 = 300_000;
/// A running turn's journal in the session envelope (`turnJournal`, `core::session::journal`):
/// the JSON bytes of the messages it records (its user message, each assistant message whose
/// tool calls run, each tool result). Four of the largest tool results fit. A record that would
/// pass it is not written: the turn ends there, before the model reads the result, so nothing
/// unrecorded is ever acted on.
pub const TURN_JOURNAL_BYTES_MAX: usize = 1_048_576;
/// A model stream that sent a chunk and then nothing more for this long has stalled: the turn
/// ends as a model failure (`modelStallMs`). Well under the turn's deadline, so a hung provider
/// shows as an error in seconds rather than a spinner for the whole turn; the time to the first
/// chunk is the deadline's alone (a reasoning model may think silently before it).
pub const MODEL_STALL_MS_DEFAULT: u64 = 10_000;
/// A chat handler's `rateLimit` hook answers within this, or the request goes on without it
/// (and `onError` is told): a slow limiter delays a turn this much at most.
pub const RATE_LIMIT_MS_MAX: u64 = 500;
/// The largest `retry-after` a rate limit's refusal says (a day).
pub const RETRY_AFTER_S_MAX: u64 = 86_400;
/// Model calls and tool runs of one turn kept for its trace (`turn::steps`): a turn's spans are
/// this many plus its own and its approvals'. Past it calls are still counted (the metrics),
/// not traced, so a long tool loop cannot grow what the end of a turn hands the tracer.
pub const TRACED_STEPS_PER_TURN_MAX: usize = 128;
/// The optional `reason` of a `client.confirmation.resolve`.
pub(crate) const CONFIRMATION_REASON_CHARS_MAX: usize = 1_024;
/// A proposal suffix: `confirm-<suffix>` must still be a SafeId. `wire`
pub(crate) const CONFIRMATION_SUFFIX_CHARS_MAX: usize = 120;
/// The id of a tool call that waits for a person: its token is `confirm-<id>`, so the id is a
/// SafeId of at most this many characters (a longer or unsafe id from the model is replaced).
pub const CONFIRMATION_CALL_ID_CHARS_MAX: usize = CONFIRMATION_SUFFIX_CHARS_MAX;
/// A resolution's claim is one CAS; a lost race against a write that did not touch the record
/// (another turn's claim or release) is retried this many times in all, then answered busy.
pub const CONFIRMATION_CLAIM_ATTEMPTS_MAX: u32 = 3;
/// A resolution that finds its record already being processed by another request waits for
/// the final state, re-reading the session after this long (doubling up to the maximum)...
pub const CONFIRMATION_SETTLE_POLL_MS: u64 = 100;
pub const CONFIRMATION_SETTLE_POLL_MS_MAX: u64 = 1_000;
/// ...for at most this long in all; then it answers with the processing state (202).
pub const CONFIRMATION_SETTLE_WAIT_MS_MAX: u64 = 10_000;
/// How much of an offending value a session decode detail quotes (logs only).
pub(crate) const SESSION_DETAIL_VALUE_CHARS_MAX: usize = 64;

// ---- The AI SDK UI message stream (src/core/ui). The stock transport sends the whole
// conversation with every request, so its body limit is larger than the turn protocol's; only
// the last message is read, within these bounds.
/// The default body limit of the UI message stream route (`maxBodyBytes` overrides it).
pub const UI_BODY_BYTES_MAX_DEFAULT: u64 = 4_194_304;
/// The last message of a request: JSON nodes, depth, parts (array items), keys per object and
/// key length.
pub const UI_MESSAGE_NODES_MAX: usize = 4_096;
pub const UI_MESSAGE_DEPTH_MAX: usize = 16;
pub const UI_MESSAGE_PARTS_MAX: usize = 256;
pub const UI_MESSAGE_OBJECT_ENTRIES_MAX: usize = 64;
pub const UI_MESSAGE_KEY_UNITS_MAX: usize = 128;
/// File parts one user message may carry.
pub const UI_MESSAGE_FILES_MAX: usize = 8;
/// A client message id kept as the stored message's id (longer ones get a server id).
pub const UI_MESSAGE_ID_CHARS_MAX: usize = 128;
/// Approvals one request may answer, and the length of a reason.
pub const UI_APPROVALS_MAX: usize = 16;
pub const UI_APPROVAL_REASON_CHARS_MAX: usize = CONFIRMATION_REASON_CHARS_MAX;

/// A client that joins a running turn late (the UI stream's resume route, a decision that lost
/// to the winner's continuation) follows the log with long-polls of at most this long ...
pub const FOLLOW_POLL_MS: u64 = 20_000;
/// ... pausing this long after a read that found chunks (a few reads a second however fast the
/// model streams; what arrives meanwhile comes in the next read) ...
pub const FOLLOW_READ_INTERVAL_MS: u64 = 25;
/// ... gives up after this many failed reads in a row ...
pub const FOLLOW_READ_FAILURES_MAX: u32 = 3;
/// ... and follows for at most this long in all (past it the stream ends; the client resumes
/// again if the turn still runs).
pub const FOLLOW_MS_MAX: u64 = 300_000;

/// `createSessionLogHandler` (a session log served over the Durable Streams read protocol): an
/// SSE read lasts this long by default (`sseMs`), then the client reads again from its offset ...
pub const LOG_SSE_MS_DEFAULT: u64 = 60_000;
/// ... writing a comment after this long without data (a runtime notices a reader gone only
/// when it writes) ...
pub const LOG_SSE_HEARTBEAT_MS: u64 = 15_000;
/// ... and a long-poll waits at most this long for data.
pub const LOG_LONG_POLL_MS: u64 = 20_000;

// ---- Handler defaults. `wire` (defaults); all must be positive safe integers.
pub const BODY_BYTES_MAX_DEFAULT: u64 = 65_536;
pub const TURN_TIMEOUT_MS_DEFAULT: u64 = 30_000;
pub const CLEANUP_TIMEOUT_MS_DEFAULT: u64 = 5_000;
/// Definitions one handler keeps read (by object identity and revision), so a request for a
/// definition it saw does not read and rebuild it again; beyond this the least recently used
/// one is read again when it comes back.
pub const DEFINITIONS_CACHED_MAX: usize = 16;
/// Random bytes the web host draws from `crypto.getRandomValues` at once for ids (one call per
/// this many bytes instead of one per id; each id takes 16).
pub const ID_RANDOM_POOL_BYTES: usize = 4_096;
/// The JS buffer a chat response's lines are copied into, a slab at a time (`web/chat/slab.rs`):
/// one allocation per this many bytes instead of one per line. A line over a quarter of it
/// gets a buffer of its own.
pub const RESPONSE_SLAB_BYTES: usize = 65_536;
// ---- Snapshot pacing (src/core/coalesce.rs): when a chat response's next full snapshot may go.
/// The byte budget of a snapshot stream by default (`createChatHandler({ snapshotBytesPerSecond
/// })`): after a line of `b` bytes the next waits `b / budget` (within the bounds below), so a
/// growing conversation gets fewer lines instead of a byte rate that grows with its square.
pub const SNAPSHOT_BYTES_PER_S_DEFAULT: u64 = 32_768;
/// One frame (60 Hz): the shortest pause between two lines, and the longest a change that is not
/// more text of an answer already showing (its first text, a message, a tool call, a status)
/// waits for its line.
pub const SNAPSHOT_FRAME_MS: u64 = 16;
/// The longest any change waits for its line, whatever the budget: while text arrives, a reader
/// that keeps up gets a line at most this long after the oldest text it has not seen (at least 4
/// lines a second), so each text reaches it within 250 ms with 25 ms left for the host's timers.
/// Past `budget × this` bytes a line, this bound rules, not the budget.
pub const SNAPSHOT_WAIT_MS_MAX: u64 = 225;
/// The lease outlives the whole turn plus three cleanup budgets (settle, save, release).
pub const fn lease_ms(turn_timeout_ms: u64, cleanup_timeout_ms: u64) -> u64 {
    turn_timeout_ms.saturating_add(cleanup_timeout_ms.saturating_mul(3))
}

// ---- Durable Streams (src/core/streams). `wire` marks facts of the Durable Streams protocol.
/// Each offset component is printed as exactly 16 decimal digits, so none may exceed this. `wire`
pub const STREAM_OFFSET_COMPONENT_MAX: u64 = 9_999_999_999_999_999;
/// One POST body (or initial PUT body); larger is 413. The conformance suite appends 100 KiB.
pub const STREAM_APPEND_BYTES_MAX: u64 = 1_048_576;
/// Any Worker answer that did not read its whole request body (a 413 decided from the declared
/// length, a 401 or 403 decided from the headers) reads and drops the rest first, up to this many
/// bytes: a client still uploading when the server answers and closes sees a broken connection
/// instead of the answer (undici does), and behind `wrangler dev`'s proxy the connection's next
/// request is then held ~20 s or answered 503. Larger bodies: the connection is closed.
pub const UNREAD_BODY_DRAIN_BYTES_MAX: u64 = 33_554_432;
/// ... and for at most this long: a client that declared more than it sends (or drips it) gets
/// its answer then, on a connection that closes.
pub const UNREAD_BODY_DRAIN_MS_MAX: u32 = 5_000;
/// Everything one stream may hold; an append past it is 413.
pub const STREAM_BYTES_MAX: u64 = 134_217_728;
/// A catch-up response stops adding messages past this many bytes (it always holds at least one).
pub const STREAM_READ_CHUNK_BYTES_MAX: u64 = 1_048_576;
/// The newest rows a stream's object keeps in memory (at least the newest one, however large), so
/// the live readers an append wakes share them instead of each reading them from storage.
pub const STREAM_RECENT_ROWS_BYTES_MAX: u64 = 262_144;
/// A read's renewal of a sliding TTL is written to storage only once it moves the stored last
/// access by at least this much; below it the renewal is kept in the object's memory (which the
/// expiry check reads) and saved with the next write. So the readers one append wakes do not
/// each write the stream's meta row; a restart can forget at most this much of a renewal.
pub const STREAM_TTL_RENEWAL_UNSAVED_MS_MAX: u64 = 250;
/// Distinct `Producer-Id`s remembered per stream; a new id beyond it is refused (429).
pub const STREAM_PRODUCERS_MAX: usize = 1_024;
/// Length of a `Producer-Id` header value.
pub const STREAM_PRODUCER_ID_BYTES_MAX: usize = 256;
/// Length of a `Stream-Seq` header value.
pub const STREAM_SEQ_BYTES_MAX: usize = 256;
/// `Stream-TTL` seconds; bounded so that the TTL in milliseconds stays a safe integer.
pub const STREAM_TTL_SECONDS_MAX: u64 = INTEGER_SAFE_MAX / 1_000;
/// Length of a `Stream-Expires-At` value (RFC 3339 needs 20; this leaves room for fractions).
pub const STREAM_EXPIRES_AT_CHARS_MAX: usize = 64;
/// Nesting of a JSON-mode append: the deepest serde_json parses into a `Value` (its recursion
/// limit), so every stored message stays readable by the server's own code.
pub const STREAM_JSON_DEPTH_MAX: usize = 127;
/// Long-poll cursors count 20 s intervals since 2024-10-09T00:00:00Z. `wire`
pub(crate) const STREAM_CURSOR_INTERVAL_MS: u64 = 20_000;
pub const STREAM_CURSOR_EPOCH_MS: u64 = 1_728_432_000_000;
/// Jitter added to a cursor the client already holds, drawn by the caller in this range. `wire`
pub const STREAM_CURSOR_JITTER_SECONDS_MIN: u32 = 1;
pub const STREAM_CURSOR_JITTER_SECONDS_MAX: u32 = 3_600;
/// A long-poll waits this long before answering 204. The conformance suite expects <= 20 s.
pub const STREAM_LONG_POLL_MS_DEFAULT: u64 = 20_000;
/// An SSE response is closed after about this long so CDNs can collapse readers. `wire` (SHOULD)
pub const STREAM_SSE_CONNECTION_MS_MAX: u64 = 60_000;
/// A long-poll may be configured (`STREAMS_LONG_POLL_MS`) to wait at most this long.
pub const STREAM_LONG_POLL_MS_MAX: u64 = 60_000;
/// Bytes of inherited rows a new fork copies from its source per round trip.
pub const STREAM_FORK_COPY_PAGE_BYTES: u64 = 4_194_304;
/// Bytes of a stream name (the part of `/v1/stream/<name>` after the prefix, decoded).
pub const STREAM_NAME_BYTES_MAX: usize = 512;
/// Long-poll reads of one stream waiting at once; one more is answered 429
/// `streams.v1.readers_busy` with `Retry-After` (each waiter holds a timer and a request).
pub const STREAM_LONG_POLL_WAITERS_MAX: usize = 1_024;
/// SSE responses of one stream open at once; one more is answered 429 `streams.v1.readers_busy`.
pub const STREAM_SSE_CONNECTIONS_MAX: usize = 256;
/// Live readers of one stream on hibernatable WebSockets at once; one more is answered 429
/// `streams.v1.readers_busy`. Idle sockets cost the object nothing (it hibernates with them
/// open), so this is far above the SSE bound, and below Cloudflare's 32,768 per object.
pub const STREAM_LIVE_SOCKETS_MAX: usize = 4_096;
/// Chunks (each at most `STREAM_READ_CHUNK_BYTES_MAX`) one append sends a socket reader that is
/// behind; a reader further behind is closed (1013) and reconnects from its offset.
pub const STREAM_SOCKET_PUSH_CHUNKS_MAX: usize = 16;
/// Seconds a client told `streams.v1.readers_busy` (or `writers_busy`) waits before trying
/// again (`Retry-After`).
pub const STREAM_READERS_BUSY_RETRY_AFTER_SECONDS: u32 = 1;
/// How long a streams request's body (a create's or an append's) may take to arrive; past it the
/// request is answered 408 `streams.v1.body_timeout`: a slow drip would otherwise hold its
/// request (and its object's attention) for as long as the client keeps dripping.
/// `STREAMS_BODY_MS` shortens it (tests), at most `STREAM_BODY_READ_MS_MAX`.
pub const STREAM_BODY_READ_MS_DEFAULT: u64 = 10_000;
pub const STREAM_BODY_READ_MS_MAX: u64 = 60_000;
/// Creates and deletes (PUT, DELETE) of one stream waiting at once behind the one running (they
/// run one at a time: a fork's PUT awaits other objects midway); one more is answered 429
/// `streams.v1.writers_busy` with `Retry-After` (each waiter holds a request).
pub const STREAM_EXCLUSIVE_WAITING_MAX: usize = 64;
/// Hops of one fork-reference release up a chain of forks (each purged source releases its
/// own source): the walk stops there and logs what it left (a reference left behind only keeps
/// a deleted source reserved, 410, longer).
pub const STREAM_FORK_RELEASE_HOPS_MAX: usize = 64;
/// Forks in a chain above a new fork (a fork of a fork of … a stream): a PUT forking a source
/// already this deep is answered 400 `streams.v1.fork_too_deep`. Equal to
/// `STREAM_FORK_RELEASE_HOPS_MAX`, so that the release walk always reaches the chain's root.
pub const STREAM_FORK_DEPTH_MAX: u32 = 64;
/// Items one append with item seqs (`Producer-Seq-Count`, `core::streams::producer`) may carry.
pub const STREAM_PRODUCER_SEQ_COUNT_MAX: u64 = 1_000;
/// How long the server holds a producer append that arrived ahead of its predecessors (a seq
/// gap) before answering 409: pipelined batches (the client keeps 5 in flight) often arrive out
/// of order by a millisecond or two.
pub const STREAM_PRODUCER_GAP_WAIT_MS: u64 = 100;

// ---- Chat controller.
pub const TOOL_ITERATIONS_MAX_DEFAULT: u32 = 5;
/// The largest `maxToolIterations` a definition may set.
pub const TOOL_ITERATIONS_MAX: u32 = 50;
/// Tool calls one model response may request; more fails the response (not a silent cut).
pub const TOOL_CALLS_PER_RESPONSE_MAX: usize = 32;
/// Accumulated argument JSON text of one tool call.
pub const TOOL_ARGS_BYTES_MAX: usize = 262_144;
/// Text one tool may return; a longer result turns that call into an error.
pub const TOOL_RESULT_BYTES_MAX: usize = 262_144;
/// Text one model response may stream into its assistant message.
pub const ASSISTANT_CONTENT_BYTES_MAX: usize = 1_048_576;
/// Reasoning text one model response may stream (kept beside its text, `metadata.reasoning`).
pub const REASONING_BYTES_MAX: usize = 1_048_576;
/// Tool input checked against its JSON Schema: the issues reported (the rest are counted), the
/// schema and value nodes one check may visit (`anyOf` / `oneOf` branches multiply them), and
/// the text the model reads back.
pub const TOOL_INPUT_ISSUES_MAX: usize = 8;
pub const TOOL_INPUT_CHECK_STEPS_MAX: usize = 100_000;
pub const TOOL_INPUT_ERROR_CHARS_MAX: usize = 2_000;
/// One issue's message as a host's schema (Standard Schema) wrote it, before it is quoted.
pub const TOOL_INPUT_ISSUE_CHARS_MAX: usize = 300;

// ---- Call settings of a chat definition (`instructions`, `temperature`, ...).
pub const CHAT_INSTRUCTIONS_CHARS_MAX: usize = 65_536;
/// `temperature` is within `0..=MODEL_TEMPERATURE_MAX` (OpenAI's range; Anthropic's is 0..=1).
pub const MODEL_TEMPERATURE_MAX: f64 = 2.0;
pub const MODEL_OUTPUT_TOKENS_MAX: u64 = 1_000_000;
pub const STOP_SEQUENCES_MAX: usize = 16;
pub const STOP_SEQUENCE_CHARS_MAX: usize = 256;
/// AgentsKit `chat.observers` one definition may list.
pub const OBSERVERS_PER_CHAT_MAX: usize = 32;
/// Demo model: largest `N` of `/words N`; a larger N is clamped to it.
pub const DEMO_WORDS_MAX: u64 = 2_000;
/// SSE (OpenAI-compatible streams): one line, and one event's joined `data` lines.
pub const SSE_LINE_BYTES_MAX: usize = 1_048_576;
pub(crate) const SSE_EVENT_BYTES_MAX: usize = 1_048_576;

// ---- JS-backed adapters (src/web/adapters).
/// How much of a host error's message a `PortError` quotes (logs only).
pub const PORT_ERROR_DETAIL_CHARS_MAX: usize = 200;
/// How much of a thrown `Error`'s message a failed JS tool passes to the model.
pub const TOOL_ERROR_MESSAGE_CHARS_MAX: usize = 500;
/// Demo model: pause between chunks unless `chunkDelayMs` says otherwise, and its largest value.
pub const DEMO_CHUNK_DELAY_MS_DEFAULT: u32 = 20;
pub const DEMO_CHUNK_DELAY_MS_MAX: u32 = 60_000;
/// OpenAI-compatible model: lengths of `baseUrl`, `model` and `apiKey`.
pub const MODEL_BASE_URL_CHARS_MAX: usize = 2_048;
pub const MODEL_NAME_CHARS_MAX: usize = 256;
pub const MODEL_API_KEY_CHARS_MAX: usize = 4_096;
/// A JS tool's name (`[A-Za-z0-9_-]`, the rule OpenAI-compatible endpoints enforce) and description.
pub const TOOL_NAME_CHARS_MAX: usize = 64;
pub const TOOL_DESCRIPTION_CHARS_MAX: usize = 4_096;
/// Tools one chat definition may declare.
pub const TOOLS_PER_CHAT_MAX: usize = 128;

// ---- Cloudflare Durable Object storage (src/cloudflare).
/// One SQLite row's text. Far below the 2 MB value limit of Durable Object storage, so a long
/// history or a large envelope is split over several rows instead of failing one write.
pub const DO_ROW_BYTES_MAX: usize = 262_144;
/// A stored session envelope's JSON text; a larger save is refused (an error, not a conflict).
pub const DO_SESSION_JSON_BYTES_MAX: usize = 16_777_216;
/// All of one session's saved messages as JSON text; a larger save is refused.
pub const DO_MESSAGES_JSON_BYTES_MAX: usize = 33_554_432;

// ---- Session log (src/ports/log.rs, src/turn).
/// Appends one turn keeps in flight to a session log without item seqs (each chunk its own
/// producer batch); a log with item seqs gets one at a time, each carrying what is queued.
pub const LOG_APPENDS_IN_FLIGHT_MAX: usize = 5;
/// Chunks one append to a log with item seqs carries at most (`turn::send`: what was queued while
/// the append before was on its way); within `STREAM_PRODUCER_SEQ_COUNT_MAX`.
pub const LOG_APPEND_CHUNKS_MAX: usize = 256;
/// Bytes of chunk text one such append carries at most (a chunk larger goes alone); half of
/// `STREAM_APPEND_BYTES_MAX`, so the JSON array always fits one request.
pub const LOG_APPEND_BATCH_BYTES_MAX: usize = 524_288;
/// Attempts of one append that failed in a retryable way (network, overload, an early seq gap).
pub const LOG_APPEND_ATTEMPTS_MAX: u32 = 5;
/// Pause before the n-th retry of an append: n times this.
pub const LOG_APPEND_RETRY_BACKOFF_MS: u64 = 25;
/// Chunks a turn may have queued for its log and not yet sent; beyond it the turn's text deltas
/// are merged into the newest queued chunk (they always are when possible) and, failing that, the
/// publisher gives up on the log for this turn (reported) rather than grow without bound.
pub const LOG_CHUNKS_QUEUED_MAX: usize = 4_096;
/// `toChatResponse`: source chunks read ahead of the log (waiting to be appended) before the
/// source is read further.
pub const LOG_SOURCE_CHUNKS_AHEAD_MAX: usize = 4 * LOG_APPENDS_IN_FLIGHT_MAX;
/// Items a store-backed session log (memory, Redis, Postgres) holds; an append beyond is refused.
pub(crate) const LOG_ITEMS_MAX: u64 = 10_000_000;
/// Items one read of a store-backed log returns at most (the reader continues from its offset).
pub const LOG_READ_ITEMS_MAX: usize = 1_000;
/// Compare-and-set attempts of one append to a store-backed log before it reports a retryable
/// failure (each lost race means another writer appended first).
pub const LOG_COMMIT_ATTEMPTS_MAX: u32 = 16;
/// How often a store-backed log without change notification re-checks during a long-poll read.
pub const LOG_POLL_INTERVAL_MS: u64 = 50;
/// Pages `resolveChatSnapshot` reads from a log before it gives up (each page is one read).
pub const RESOLVE_READS_MAX: usize = 100_000;
/// The stop watcher's long-poll wait on the session log.
pub const STOP_WATCH_POLL_MS: u64 = 20_000;
/// The stop watcher's pause after a read that found chunks but no stop: it bounds its reads to
/// about 1000 / this per second however fast the turn appends (it would otherwise read back
/// every chunk the turn itself appends), and adds at most this to a stop's latency.
pub const STOP_WATCH_READ_INTERVAL_MS: u64 = 50;
/// Consecutive failed reads after which the stop watcher gives up (the deadline still holds).
pub const STOP_WATCH_READ_FAILURES_MAX: u32 = 3;

// ---- The live connection (`createChatConnection`, src/core/connection): one SSE read per
// connection, shared by its logical readers.
/// A stream that does not exist yet (404: no turn has published to it) is polled again after a
/// delay that starts here and doubles per consecutive 404 ...
pub const CONNECTION_MISSING_POLL_MS_MIN: u64 = 100;
/// ... up to this. Polling goes on while a reader waits (its signal or `dispose()` ends it); a
/// successful `send()` polls at once.
pub const CONNECTION_MISSING_POLL_MS_MAX: u64 = 2_000;
/// After a failed read (network error, 429/5xx, a broken event stream, a connection that ended
/// early without news) the next one waits a delay that starts here and doubles per failure ...
pub const CONNECTION_RETRY_MS_MIN: u64 = 250;
/// ... up to this.
pub const CONNECTION_RETRY_MS_MAX: u64 = 8_000;
/// Consecutive failed reads after which the readers end with `STREAM_UNAVAILABLE`.
pub const CONNECTION_FAILURES_MAX: u32 = 8;
/// A read that stayed open this long, or moved the offset, was healthy: when it ends (the
/// server closes SSE responses about every minute) the next one starts at once.
pub const CONNECTION_HEALTHY_MS: u64 = 1_000;
/// Chunks delivered to one reader and not yet taken; a reader that falls further behind ends
/// with `STREAM_READER_OVERFLOW` (its peers read on).
pub const CONNECTION_READER_BACKLOG_CHUNKS_MAX: usize = 10_000;
/// Logical readers of one connection at a time; one more ends at once with `STREAM_READERS_EXHAUSTED`.
pub(crate) const CONNECTION_READERS_MAX: usize = 1_024;
/// One event-stream line and one event's data: a server may put several appends (each at most
/// [`STREAM_APPEND_BYTES_MAX`]) in one `data` event.
pub(crate) const CONNECTION_SSE_EVENT_BYTES_MAX: usize = 4 * STREAM_APPEND_BYTES_MAX as usize;
/// An offset the connection is given or sent (`initialOffset`, `streamNextOffset`).
pub(crate) const CONNECTION_OFFSET_CHARS_MAX: usize = 256;
/// `streamCursor` echoed back as `cursor` on the next read (CDN request collapsing).
pub(crate) const CONNECTION_CURSOR_CHARS_MAX: usize = 256;

// ---- Durable stores off Cloudflare (js/stores: turnkeep/redis, turnkeep/postgres). JS only:
// mirrored in js/stores/common.mjs and js/stores/redis/chat-memory.mjs, compared by tests/stores.
/// A stored session envelope's JSON text, as in the Durable Object store; a larger save is refused.
pub const STORE_SESSION_JSON_BYTES_MAX: usize = 16_777_216;
/// All of one session's saved messages as JSON text, as in the Durable Object store.
pub const STORE_MESSAGES_JSON_BYTES_MAX: usize = 33_554_432;
/// A Redis key prefix or a Postgres scope chosen by the host.
pub const STORE_KEY_PART_CHARS_MAX: usize = 256;
/// Values one RPUSH takes inside the messages script (Lua's `unpack` stops near 8000).
pub const REDIS_SCRIPT_PUSH_VALUES_MAX: usize = 1_000;
/// The items of one session-log commit as JSON text: room for one `MESSAGES_SNAPSHOT` of a whole
/// conversation (it carries the messages twice, as TanStack UI and as canonical messages).
pub const STORE_LOG_COMMIT_JSON_BYTES_MAX: usize = 67_108_864;

// ---- Snapshot sequences (ARCHITECTURE.md): sequence = claim_cursor × stride + index_in_turn.
/// Sequences one turn may use; a turn emitting more skips intermediates, never the final line.
pub(crate) const SNAPSHOT_SEQUENCE_STRIDE: u64 = 1 << 20;

/// The longest duration a host timer accepts (`setTimeout` fires at once beyond 2^31 - 1 ms).
pub const TIMER_MS_MAX: u32 = 2_147_483_647;

// ---- Ask service (src/core/ask). `wire` marks facts of AgentsKit's `agentskit.chat.ask` v1,
// its backend-site v1 config, its Ask NDJSON events and its server.
pub const ASK_BODY_BYTES_MAX_DEFAULT: u64 = 65_536; // `wire` (default)
pub const ASK_BOOTSTRAP_TIMEOUT_MS_DEFAULT: u64 = 30_000; // `wire` (default)
/// Messages in one request, and kept in a stored session record. `wire`
pub(crate) const ASK_MESSAGES_MAX: usize = 64;
/// UTF-16 units of one message's `content`. `wire`
pub(crate) const ASK_MESSAGE_UNITS_MAX: usize = 16_384;
/// Sources a site may cite per answer (`limits.maxSources` is at most this). `wire`
pub const ASK_SOURCES_MAX: usize = 8;
/// UTF-16 units of a label (a source title, the assistant name, a suggestion), after trimming. `wire`
pub(crate) const ASK_LABEL_UNITS_MAX: usize = 256;
/// UTF-16 units of a source `href`. `wire`
pub(crate) const ASK_HREF_UNITS_MAX: usize = 2_048;
/// UTF-16 units of a source excerpt, after trimming. `wire`
pub(crate) const ASK_EXCERPT_UNITS_MAX: usize = 4_096;
/// Suggestions, components and actions of a site config. `wire`
pub(crate) const ASK_SUGGESTIONS_MAX: usize = 8;
pub(crate) const ASK_COMPONENTS_MAX: usize = 64;
pub(crate) const ASK_ACTIONS_MAX: usize = 64;
/// The site's deadlines (`limits.*TimeoutMs`), inclusive bounds. `wire`
pub(crate) const ASK_TIMEOUT_MS_MIN: u64 = 100;
pub(crate) const ASK_REQUEST_TIMEOUT_MS_MAX: u64 = 120_000;
pub(crate) const ASK_RETRIEVAL_TIMEOUT_MS_MAX: u64 = 60_000;
pub(crate) const ASK_GENERATION_TIMEOUT_MS_MAX: u64 = 120_000;
/// UTF-16 units of a whole generated answer; more fails the answer. `wire`
pub(crate) const ASK_ANSWER_UNITS_MAX: usize = 16_384;
/// A host subject id: `^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$`. `wire`
pub(crate) const ASK_SUBJECT_ID_CHARS_MAX: usize = 256;
/// UTF-16 units of a usage `model` name, after trimming. `wire`
pub(crate) const ASK_MODEL_UNITS_MAX: usize = 256;
/// The deterministic escalation a request may carry: query and message lengths, candidates. `wire`
pub(crate) const ASK_DETERMINISTIC_QUERY_UNITS_MAX: usize = 512;
pub(crate) const ASK_DETERMINISTIC_MESSAGE_UNITS_MAX: usize = 4_096;
pub(crate) const ASK_DETERMINISTIC_CANDIDATES_MAX: usize = 8;
/// turnkeep's `citations.origins` site extension: origins one site may allow.
pub(crate) const ASK_CITATION_ORIGINS_MAX: usize = 64;
/// A `retry-after` a rate limiter may ask for (one day); longer is clamped to it.
pub(crate) const ASK_RETRY_AFTER_SECONDS_MAX: u64 = 86_400;

// ---- The built-in local retriever (src/core/ask/bm25.rs).
/// Documents one local corpus may hold, and their text in total (UTF-8 bytes).
pub(crate) const ASK_CORPUS_DOCUMENTS_MAX: usize = 10_000;
pub(crate) const ASK_CORPUS_TEXT_BYTES_MAX: usize = 16_777_216;
/// Distinct query terms scored; a longer question is scored on its first terms.
pub(crate) const ASK_QUERY_TERMS_MAX: usize = 64;
/// Characters of the excerpt the local retriever cuts from a matching document.
pub(crate) const ASK_RETRIEVER_EXCERPT_CHARS_MAX: usize = 480;

// ---- MCP `ui://` sandbox (src/core/sandbox).
/// Characters of the `?uri=` value.
pub(crate) const SANDBOX_URI_CHARS_MAX: usize = 2_048;
/// Characters of a theme name (a `themes` key, or `?theme=`).
pub const SANDBOX_THEME_NAME_CHARS_MAX: usize = 128;
/// Themes one handler may hold, and tokens one theme may hold.
pub(crate) const SANDBOX_THEMES_MAX: usize = 64;
pub(crate) const SANDBOX_THEME_TOKENS_MAX: usize = 512;
/// Characters of a token name (`--ns-...`) and of its value.
pub(crate) const SANDBOX_TOKEN_NAME_CHARS_MAX: usize = 128;
pub(crate) const SANDBOX_TOKEN_VALUE_CHARS_MAX: usize = 1_024;
/// UTF-8 bytes of a resource's HTML body.
pub(crate) const SANDBOX_RESOURCE_BODY_BYTES_MAX: usize = 4_194_304;
/// Origins one resource may declare per CSP list, and the characters of each.
pub(crate) const SANDBOX_CSP_DOMAINS_MAX: usize = 32;
pub(crate) const SANDBOX_CSP_DOMAIN_CHARS_MAX: usize = 256;
