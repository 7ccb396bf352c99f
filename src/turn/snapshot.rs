//! The lines of the sender's NDJSON response: full `server.turn.snapshot` events built from the
//! controller's state when a reader takes one (never ahead of a reader that is not reading), and the closing diagnostic.
//!
//! A snapshot carries the whole conversation, so building each one from scratch costs the
//! conversation's size per line. The encoder keeps every message's encoded bytes from its last
//! line and asks the controller which messages changed since then
//! ([`ChatController::first_changed_since`]): only that tail is encoded again (while the model
//! streams, the one growing message). The line is written into one buffer the encoder reuses,
//! byte for byte what [`encode_turn_event_line`] writes (`tests/snapshot_lines.rs`).

use turnkeep_core::chat::controller::{ChatController, ChatState, ChatStatus};
use turnkeep_core::checks::format_iso_millis_at;
use turnkeep_core::coalesce::Urgency;
use turnkeep_core::protocol::encode::write_json;
use turnkeep_core::protocol::{
    encode_turn_event_line, write_snapshot_tail, BoundaryError, Envelope, EventBody, Lineage,
    Message, SnapshotHead, SnapshotParts, SnapshotPayload, TurnDiagnostic, TurnEvent, TurnStatus,
    Usage,
};
use turnkeep_core::sequence::{CursorTooLarge, TurnSequencer};
use turnkeep_core::session::Confirmation;
use turnkeep_ports::chat::{Clock, Ids};

/// One line of the response body, encoded when a reader takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// The controller's state as it is at that moment.
    State,
    /// The line that closes a response after a failure or an interruption.
    Diagnostic(BoundaryError),
}

/// What an encoder did (benchmarks and tests: the reuse is the point).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Lines written.
    pub lines: u64,
    /// Messages encoded (again) for those lines.
    pub messages_encoded: u64,
    /// Messages whose bytes from an earlier line were reused.
    pub messages_reused: u64,
}

/// Encodes this turn's lines with their sequences (`claim_cursor × stride + index`).
#[derive(Debug)]
pub struct LineEncoder {
    envelope: Envelope,
    sequencer: TurnSequencer,
    head: SnapshotHead,
    messages: EncodedMessages,
    /// The line's end after the messages as last written, and what it was written from
    /// (`None`: not reusable, e.g. it showed confirmations, which are not compared).
    tail: Vec<u8>,
    tail_of: Option<TailOf>,
    line: Vec<u8>,
    counts: LineCounts,
}

/// What a snapshot line's tail shows besides the fixed lineage: while a model streams text,
/// none of it changes from line to line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TailOf {
    status: TurnStatus,
    usage: Usage,
    failed: bool,
}

impl LineEncoder {
    /// For the turn whose claim wrote `claim_cursor`.
    pub fn new(session_id: &str, turn_id: &str, claim_cursor: u64) -> Result<Self, CursorTooLarge> {
        Ok(Self {
            envelope: Envelope {
                event_id: String::new(),
                session_id: session_id.to_owned(),
                turn_id: turn_id.to_owned(),
                sequence: 0,
                emitted_at: String::new(),
            },
            sequencer: TurnSequencer::new(claim_cursor)?,
            head: SnapshotHead::new(session_id, turn_id),
            messages: EncodedMessages::default(),
            tail: Vec::new(),
            tail_of: None,
            line: Vec::new(),
            counts: LineCounts::default(),
        })
    }

    /// How long the controller's state may wait for its line (`core::coalesce`): `Paced` when
    /// all that changed since the last line is more text of the answer that line showed (its
    /// last message grew, and had text already) or the usage, `Prompt` for anything else (the
    /// first line, an answer's first text, a message, a tool call, a status).
    pub fn urgency(&self, controller: &ChatController) -> Urgency {
        self.messages.urgency(controller)
    }

    /// The NDJSON line for `line` (valid until the next call), or `None` when an intermediate
    /// snapshot has no sequence left (a newer one follows; the last line always has one).
    /// `confirmations` go into a snapshot as they are (see [`snapshot_payload`]).
    pub fn encode(
        &mut self,
        line: Line,
        is_last: bool,
        controller: &ChatController,
        confirmations: &[Confirmation],
        clock: &dyn Clock,
        ids: &dyn Ids,
    ) -> Option<&[u8]> {
        self.envelope.sequence = if is_last {
            Some(self.sequencer.next_final())
        } else {
            self.sequencer.next_intermediate()
        }?;
        self.envelope.event_id = ids.event_id();
        self.envelope.emitted_at = format_iso_millis_at(clock.now_ms());
        self.line.clear();
        match line {
            Line::State => {
                let (encoded, reused) = self.messages.update(controller);
                self.counts.messages_encoded += encoded;
                self.counts.messages_reused += reused;
                let state = controller.state();
                let tail_of = TailOf {
                    status: turn_status(state),
                    usage: usage(state),
                    failed: state.error.is_some(),
                };
                if !confirmations.is_empty() || self.tail_of != Some(tail_of) {
                    let error = tail_of
                        .failed
                        .then(|| BoundaryError::ChatTurnFailed.diagnostic());
                    let parts = SnapshotParts {
                        status: tail_of.status,
                        usage: &tail_of.usage,
                        error: error.as_ref(),
                        lineage: Some(&Lineage::Submit),
                        confirmations,
                    };
                    self.tail.clear();
                    write_snapshot_tail(&mut self.tail, &parts);
                    self.tail_of = confirmations.is_empty().then_some(tail_of);
                }
                let e = &self.envelope;
                self.head
                    .write(&mut self.line, &e.event_id, e.sequence, &e.emitted_at);
                self.line.extend_from_slice(&self.messages.bytes);
                self.line.extend_from_slice(&self.tail);
            }
            Line::Diagnostic(error) => {
                let event = TurnEvent {
                    envelope: self.envelope.clone(),
                    body: EventBody::Diagnostic(in_stream(error)),
                };
                self.line
                    .extend_from_slice(encode_turn_event_line(&event).as_bytes());
            }
        }
        self.counts.lines += 1;
        Some(&self.line)
    }

    pub fn counts(&self) -> LineCounts {
        self.counts
    }
}

/// The messages of the last line, encoded: `m0,m1,…` and where each one ends.
#[derive(Debug, Default)]
struct EncodedMessages {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    /// The controller revision they were encoded at (`None`: never).
    revision: Option<u64>,
    /// The last message as encoded, for growing it in place (see [`Growing`]).
    growing: Option<Growing>,
    /// The content length of the last message as encoded (0: it showed no text).
    last_content_bytes: usize,
}

/// Where the last encoded message's content is, so that a line whose only change is text
/// appended to that content (a model streaming; the controller says so:
/// [`ChatController::only_appended_since`]) escapes the appended text alone: the bytes up to
/// the end of the escaped content stay, the new text is escaped after them, and the bytes after
/// the content (status, createdAt, …, unchanged) follow again. JSON string escaping works
/// character by character, so escaping the parts is escaping the whole
/// (`tests/snapshot_lines.rs` checks the lines byte for byte against whole encodings).
#[derive(Debug)]
struct Growing {
    /// The content's length in bytes when it was last encoded.
    content_len: usize,
    /// Where the escaped content ends in `bytes` (its closing quote).
    content_end: usize,
    /// From the content's closing quote to the end of the message.
    tail: Vec<u8>,
}

impl EncodedMessages {
    /// See [`LineEncoder::urgency`].
    fn urgency(&self, controller: &ChatController) -> Urgency {
        let Some(seen) = self.revision else {
            return Urgency::Prompt;
        };
        let count = controller.state().messages.len();
        let keep = controller.first_changed_since(Some(seen));
        let more_text = keep + 1 == count
            && self.last_content_bytes > 0
            && controller.only_appended_since(keep, seen);
        if count == self.ends.len() && (keep >= count || more_text) {
            Urgency::Paced
        } else {
            Urgency::Prompt
        }
    }

    /// Brings the bytes up to the controller's messages, encoding only those that changed since
    /// the last update. Returns (encoded, reused); a message grown in place counts as encoded.
    fn update(&mut self, controller: &ChatController) -> (u64, u64) {
        let messages = &controller.state().messages;
        let keep = controller
            .first_changed_since(self.revision)
            .min(self.ends.len());
        let appended_only = self
            .revision
            .is_some_and(|seen| controller.only_appended_since(keep, seen));
        self.revision = Some(controller.revision());
        self.last_content_bytes = messages.last().map_or(0, |m| m.content.len());
        if keep + 1 == messages.len()
            && keep + 1 == self.ends.len()
            && appended_only
            && self.grow(&messages[keep])
        {
            return (1, keep as u64);
        }
        self.ends.truncate(keep);
        self.bytes.truncate(self.ends.last().copied().unwrap_or(0));
        for message in &messages[keep..] {
            if !self.ends.is_empty() {
                self.bytes.push(b',');
            }
            write_json(&mut self.bytes, message);
            self.ends.push(self.bytes.len());
        }
        self.growing = match messages.last() {
            Some(last) if keep < messages.len() => self.locate_content(last),
            _ => None,
        };
        ((messages.len() - keep) as u64, keep as u64)
    }

    /// Appends to the last message's escaped content the text `now` has beyond it. The caller
    /// knows from the controller that `now` is that message with text appended and nothing else
    /// changed; false (nothing touched) when there is no encoded content to grow.
    fn grow(&mut self, now: &Message) -> bool {
        let Some(growing) = &mut self.growing else {
            return false;
        };
        let Some(appended) = now.content.get(growing.content_len..) else {
            return false;
        };
        self.bytes.truncate(growing.content_end);
        // `"…"` written and its quotes dropped: the escaped text alone.
        let at = self.bytes.len();
        write_json(&mut self.bytes, appended);
        self.bytes.remove(at);
        self.bytes.pop();
        growing.content_end = self.bytes.len();
        self.bytes.extend_from_slice(&growing.tail);
        if let Some(end) = self.ends.last_mut() {
            *end = self.bytes.len();
        }
        growing.content_len = now.content.len();
        true
    }

    /// Where `last` (just written at the end of `bytes`) has its escaped content. Keys come in
    /// the canonical order (`id`, `role`, `content`, …) and an escaped id holds no bare `"`, so
    /// the first `,"content":"` is the key; the content ends at its first unescaped `"`.
    fn locate_content(&self, last: &Message) -> Option<Growing> {
        const KEY: &[u8] = b",\"content\":\"";
        let start = match self.ends.len() {
            0 | 1 => 0,
            n => self.ends[n - 2] + 1,
        };
        let message = &self.bytes[start..];
        let content_start = message.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
        let mut i = content_start;
        while i < message.len() {
            match message[i] {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        (i < message.len()).then(|| Growing {
            content_len: last.content.len(),
            content_end: start + i,
            tail: message[i..].to_vec(),
        })
    }
}

/// The snapshot payload of a state: its messages, status, usage and error, and the session's
/// confirmations the turn shows (its [`crate::Turn::confirmations`]). The reference the
/// encoder's lines are checked against.
pub fn snapshot_payload(state: &ChatState, confirmations: &[Confirmation]) -> SnapshotPayload {
    SnapshotPayload {
        messages: state.messages.clone(),
        status: turn_status(state),
        usage: usage(state),
        error: state
            .error
            .map(|_| BoundaryError::ChatTurnFailed.diagnostic()),
        lineage: Some(Lineage::Submit),
        confirmations: confirmations.to_vec(),
    }
}

fn turn_status(state: &ChatState) -> TurnStatus {
    match state.status {
        ChatStatus::Error => TurnStatus::Error,
        ChatStatus::Streaming => TurnStatus::Streaming,
        _ if state.messages.is_empty() => TurnStatus::Idle,
        _ => TurnStatus::Complete,
    }
}

fn usage(state: &ChatState) -> Usage {
    Usage {
        prompt_tokens: state.usage.prompt_tokens,
        completion_tokens: state.usage.completion_tokens,
        total_tokens: state.usage.total_tokens,
    }
}

/// In-stream diagnostics are always retryable (the response had already started).
fn in_stream(error: BoundaryError) -> TurnDiagnostic {
    TurnDiagnostic {
        retryable: true,
        ..error.diagnostic()
    }
}
