//! The turn after its claim: load messages, start the controller, stream snapshots, and clean
//! up exactly once (settle, save messages, release the lease by CAS, close the stream).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::Response;

use crate::core::chat::controller::{Action, ChatController, ChatStatus};
use crate::core::protocol::{
    encode_turn_event_line, BoundaryError, Envelope, EventBody, Lineage, SnapshotPayload,
    TurnDiagnostic, TurnEvent, TurnStatus, Usage,
};
use crate::core::sequence::TurnSequencer;
use crate::core::session::{release_turn, SessionEnvelope, TurnOutcome};
use crate::ports::chat::{CancelToken, ChatMemory, Clock, Ids, Tool};
use crate::web::adapters::JsSessionStorage;

use super::definition::Definition;
use super::handler::{abandon, cleanup_signal, save_after_claim, Deadline, Failure};
use super::http::ndjson_response;
use super::js::{get_fn, on_abort, within_ms};
use super::options::HandlerOptions;
use super::stream::PullStream;
use crate::turn::{begin_turn, drive_turn, TurnPorts};

/// A turn whose lease is ours (the claim was CAS-saved).
pub(crate) struct Claimed {
    pub envelope: SessionEnvelope,
    pub storage: Rc<JsSessionStorage>,
    pub definition: Definition,
    pub input: String,
    pub turn_id: String,
    pub session_id: String,
}

/// The host's `now()` and `createId()`, or `Date.now()` and `crypto.randomUUID()`.
#[derive(Clone)]
pub(crate) struct HostClock {
    now: Option<Function>,
    create_id: Option<Function>,
    counter: Rc<Cell<u64>>,
}

impl HostClock {
    pub fn new(options: &HandlerOptions) -> Self {
        Self {
            now: options.now.clone(),
            create_id: options.create_id.clone(),
            counter: Rc::default(),
        }
    }

    pub fn now_ms(&self) -> u64 {
        let value = match &self.now {
            Some(now) => now.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()),
            None => Some(js_sys::Date::now()),
        };
        value
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map_or(0, |n| n as u64)
    }

    /// A fresh SafeId from the host, or a counter-based one if the host's id is unusable.
    pub fn new_id(&self) -> String {
        let from_host = match &self.create_id {
            Some(create) => create
                .call0(&JsValue::UNDEFINED)
                .ok()
                .and_then(|v| v.as_string()),
            None => random_uuid(),
        };
        from_host
            .filter(|id| crate::core::checks::is_safe_id(id))
            .unwrap_or_else(|| {
                self.counter.set(self.counter.get() + 1);
                format!("id-{}-{}", self.now_ms(), self.counter.get())
            })
    }
}

impl Clock for HostClock {
    fn now_ms(&self) -> u64 {
        HostClock::now_ms(self)
    }
}

impl Ids for HostClock {
    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.new_id())
    }
}

fn random_uuid() -> Option<String> {
    let crypto = super::js::get(&js_sys::global(), "crypto");
    get_fn(&crypto, "randomUUID")?
        .call0(&crypto)
        .ok()?
        .as_string()
}

/// One line of the response body, encoded when a reader takes it.
enum Line {
    /// The controller's state as it is at that moment.
    State,
    Diagnostic(BoundaryError),
}

/// Why the turn was stopped from outside.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StopReason {
    Deadline,
    ClientAbort,
    ResponseCancelled,
}

/// Everything the running turn shares between the driver, the stream and cleanup.
struct Turn {
    options: Rc<HandlerOptions>,
    claimed: Claimed,
    clock: HostClock,
    controller: RefCell<ChatController>,
    stop: CancelToken,
    stop_reason: Cell<Option<StopReason>>,
}

/// Steps 6-7: loads messages, starts the controller and returns the 200 stream. A failure
/// before the stream exists gives the lease up at once (see [`abandon`]).
pub(crate) async fn start_turn(
    options: Rc<HandlerOptions>,
    claimed: Claimed,
    deadline: Deadline,
    clock: HostClock,
) -> Result<Response, Failure> {
    let storage = claimed.storage.clone();
    let (envelope, turn_id) = (claimed.envelope.clone(), claimed.turn_id.clone());
    let opened = open_turn(options.clone(), claimed, &deadline, clock.clone()).await;
    let (turn, stream, response, first) = match opened {
        Ok(opened) => opened,
        Err(failure) => {
            let budget_ms = options.cleanup_timeout_ms;
            abandon(&storage, &envelope, &turn_id, clock.now_ms(), budget_ms).await;
            return Err(failure);
        }
    };
    watch_deadline(&turn, &deadline);
    spawn_local(async move {
        let tools: Vec<&dyn Tool> = turn
            .claimed
            .definition
            .tools
            .iter()
            .map(|t| t.as_ref())
            .collect();
        let ports = TurnPorts {
            model: turn.claimed.definition.model.as_ref(),
            tools: &tools,
            clock: &turn.clock,
            ids: &turn.clock,
        };
        let publish = &mut |_, _: &_| stream.publish(Line::State);
        drive_turn(&turn.controller, first, ports, &turn.stop, publish).await;
        finish(&turn, &stream).await;
        drop(deadline);
    });
    Ok(response)
}

/// Everything of step 6 that can still fail: the messages, `send`, the sequencer, the stream
/// and its response. Nothing runs yet.
async fn open_turn(
    options: Rc<HandlerOptions>,
    claimed: Claimed,
    deadline: &Deadline,
    clock: HostClock,
) -> Result<(Rc<Turn>, PullStream<Line>, Response, Action), Failure> {
    let memory = claimed
        .definition
        .memory
        .with_signal(Some(deadline.signal.clone()));
    let loaded = deadline
        .run(async {
            memory
                .load()
                .await
                .map_err(|_| BoundaryError::Internal.into())
        })
        .await?;
    let history = if loaded.is_empty() {
        claimed.definition.initial_messages.clone()
    } else {
        loaded
    };
    let controller = RefCell::new(ChatController::new(
        claimed.definition.chat_config(),
        history,
    ));
    let send_ports = TurnPorts {
        model: claimed.definition.model.as_ref(),
        tools: &[],
        clock: &clock,
        ids: &clock,
    };
    let first = begin_turn(&controller, &claimed.input, send_ports)
        .map_err(|_| BoundaryError::InvalidEvent)?;
    let sequencer =
        TurnSequencer::new(claimed.envelope.cursor).map_err(|_| BoundaryError::Internal)?;
    let turn = Rc::new(Turn {
        options,
        claimed,
        clock,
        controller,
        stop: CancelToken::new(),
        stop_reason: Cell::new(None),
    });
    let (stream, body) = build_stream(&turn, sequencer).map_err(|_| BoundaryError::Internal)?;
    let response = ndjson_response(&body).map_err(|_| BoundaryError::Internal)?;
    Ok((turn, stream, response, first))
}

fn build_stream(
    turn: &Rc<Turn>,
    mut sequencer: TurnSequencer,
) -> Result<(PullStream<Line>, web_sys::ReadableStream), JsValue> {
    let encoder_turn = turn.clone();
    let encode = Box::new(move |line: Line, is_last: bool| {
        let sequence = if is_last {
            Some(sequencer.next_final())
        } else {
            sequencer.next_intermediate()
        }?;
        Some(encoder_turn.encode(line, sequence).into_bytes())
    });
    let cancel_turn = Rc::downgrade(turn);
    let on_cancel = Box::new(move || {
        if let Some(turn) = cancel_turn.upgrade() {
            turn.request_stop(StopReason::ResponseCancelled);
        }
    });
    PullStream::new(encode, on_cancel)
}

/// The deadline (client abort or timeout) stops the controller at once; cleanup follows in
/// the driver task even if no reader ever pulls again.
fn watch_deadline(turn: &Rc<Turn>, deadline: &Deadline) {
    let weak = Rc::downgrade(turn);
    let timeout = deadline.timeout_signal();
    let stop = Closure::once_into_js(move || {
        if let Some(turn) = weak.upgrade() {
            let reason = if timeout.aborted() {
                StopReason::Deadline
            } else {
                StopReason::ClientAbort
            };
            turn.request_stop(reason);
        }
    });
    on_abort(&deadline.signal, stop.unchecked_ref());
}

impl Turn {
    fn request_stop(&self, reason: StopReason) {
        if self.stop_reason.get().is_none() && !self.stop.is_cancelled() {
            self.stop_reason.set(Some(reason));
        }
        self.stop.cancel();
    }

    fn encode(&self, line: Line, sequence: u64) -> String {
        let envelope = Envelope {
            event_id: self.clock.new_id(),
            session_id: self.claimed.session_id.clone(),
            turn_id: self.claimed.turn_id.clone(),
            sequence,
            emitted_at: crate::core::checks::format_iso_millis_at(self.clock.now_ms()),
        };
        let body = match line {
            Line::State => EventBody::Snapshot(self.snapshot()),
            Line::Diagnostic(error) => EventBody::Diagnostic(in_stream(error)),
        };
        encode_turn_event_line(&TurnEvent { envelope, body })
    }

    fn snapshot(&self) -> SnapshotPayload {
        let controller = self.controller.borrow();
        let state = controller.state();
        let status = match state.status {
            ChatStatus::Error => TurnStatus::Error,
            ChatStatus::Streaming => TurnStatus::Streaming,
            _ if state.messages.is_empty() => TurnStatus::Idle,
            _ => TurnStatus::Complete,
        };
        SnapshotPayload {
            messages: state.messages.clone(),
            status,
            usage: Usage {
                prompt_tokens: state.usage.prompt_tokens,
                completion_tokens: state.usage.completion_tokens,
                total_tokens: state.usage.total_tokens,
            },
            error: state
                .error
                .map(|_| BoundaryError::ChatTurnFailed.diagnostic()),
            lineage: Some(Lineage::Submit),
        }
    }
}

/// In-stream diagnostics are always retryable (the response had already started).
fn in_stream(error: BoundaryError) -> TurnDiagnostic {
    TurnDiagnostic {
        retryable: true,
        ..error.diagnostic()
    }
}

/// Cleanup, once: save messages (bounded), release the lease by CAS (bounded), then close the
/// stream with the final line. A successful response closes only after both saves.
async fn finish(turn: &Turn, stream: &PullStream<Line>) {
    let budget_ms = turn.options.cleanup_timeout_ms;
    let messages = turn.controller.borrow().state().messages.clone();
    let memory = turn
        .claimed
        .definition
        .memory
        .with_signal(cleanup_signal(budget_ms));
    let saved = matches!(
        within_ms(budget_ms, memory.save(&messages)).await,
        Some(Ok(()))
    );
    let outcome = if saved {
        TurnOutcome::Completed
    } else {
        TurnOutcome::Indeterminate
    };
    let claimed = &turn.claimed;
    let released = match release_turn(
        &claimed.envelope,
        &claimed.turn_id,
        outcome,
        turn.clock.now_ms(),
    ) {
        Ok(next) => {
            save_after_claim(&claimed.storage, &next, claimed.envelope.cursor, budget_ms).await
        }
        Err(_) => None,
    };
    let last = match turn.stop_reason.get() {
        Some(StopReason::Deadline) => Some(BoundaryError::Timeout),
        Some(StopReason::ClientAbort) => Some(BoundaryError::Cancelled),
        Some(StopReason::ResponseCancelled) => None,
        None if !saved => Some(BoundaryError::Internal),
        None => match released {
            Some(Ok(true)) => None,
            Some(Ok(false)) => Some(BoundaryError::SessionConflict),
            _ => Some(BoundaryError::Internal),
        },
    };
    stream.close_with(last.map(Line::Diagnostic));
}
