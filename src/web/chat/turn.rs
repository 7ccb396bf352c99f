//! The turn after its claim: load messages, start the controller, stream snapshots, and clean
//! up exactly once (settle, save messages, release the lease by CAS, close the stream).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::Response;

use crate::core::chat::controller::{Action, ChatController, ChatStatus, ToolOutcome};
use crate::core::protocol::{
    encode_turn_event_line, BoundaryError, Envelope, EventBody, Lineage, SnapshotPayload, TurnDiagnostic, TurnEvent,
    TurnStatus, Usage,
};
use crate::core::sequence::TurnSequencer;
use crate::core::session::{release_turn, SessionEnvelope, TurnOutcome};
use crate::ports::chat::{CancelToken, ModelStream};
use crate::ports::session::SessionStorage;

use super::definition::Definition;
use super::handler::{abandon, Deadline, Failure};
use super::http::ndjson_response;
use super::js::{get_fn, race, within_ms, Either};
use super::options::HandlerOptions;
use super::stream::PullStream;

/// A turn whose lease is ours (the claim was CAS-saved).
pub(crate) struct Claimed {
    pub envelope: SessionEnvelope,
    pub storage: Rc<dyn SessionStorage>,
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
        Self { now: options.now.clone(), create_id: options.create_id.clone(), counter: Rc::default() }
    }

    pub fn now_ms(&self) -> u64 {
        let value = match &self.now {
            Some(now) => now.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()),
            None => Some(js_sys::Date::now()),
        };
        value.filter(|n| n.is_finite() && *n >= 0.0).map_or(0, |n| n as u64)
    }

    /// A fresh SafeId from the host, or a counter-based one if the host's id is unusable.
    pub fn new_id(&self) -> String {
        let from_host = match &self.create_id {
            Some(create) => create.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_string()),
            None => random_uuid(),
        };
        from_host.filter(|id| crate::core::checks::is_safe_id(id)).unwrap_or_else(|| {
            self.counter.set(self.counter.get() + 1);
            format!("id-{}-{}", self.now_ms(), self.counter.get())
        })
    }
}

fn random_uuid() -> Option<String> {
    let crypto = super::js::get(&js_sys::global(), "crypto");
    get_fn(&crypto, "randomUUID")?.call0(&crypto).ok()?.as_string()
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
    published_revision: Cell<u64>,
}

/// Steps 6-7: loads messages, starts the controller and returns the 200 stream.
pub(crate) async fn start_turn(
    options: Rc<HandlerOptions>,
    claimed: Claimed,
    deadline: Deadline,
    clock: HostClock,
) -> Result<Response, Failure> {
    let loaded = deadline.run(async { claimed.definition.memory.load().await.map_err(|_| BoundaryError::Internal.into()) }).await;
    let history = match loaded {
        Ok(messages) if messages.is_empty() => claimed.definition.initial_messages.clone(),
        Ok(messages) => messages,
        Err(failure) => {
            abandon(claimed.storage.as_ref(), &claimed.envelope, &claimed.turn_id, clock.now_ms()).await;
            return Err(failure);
        }
    };
    let mut controller = ChatController::new(claimed.definition.chat_config(), history);
    let mut ids = |prefix: &str| format!("{prefix}-{}", clock.new_id());
    let first = match controller.send(&claimed.input, clock.now_ms(), &mut ids) {
        Ok(action) => action,
        Err(_) => {
            abandon(claimed.storage.as_ref(), &claimed.envelope, &claimed.turn_id, clock.now_ms()).await;
            return Err(BoundaryError::InvalidEvent.into());
        }
    };
    let sequencer = match TurnSequencer::new(claimed.envelope.cursor) {
        Ok(s) => s,
        Err(_) => {
            abandon(claimed.storage.as_ref(), &claimed.envelope, &claimed.turn_id, clock.now_ms()).await;
            return Err(BoundaryError::Internal.into());
        }
    };
    let turn = Rc::new(Turn {
        options,
        claimed,
        clock,
        controller: RefCell::new(controller),
        stop: CancelToken::new(),
        stop_reason: Cell::new(None),
        published_revision: Cell::new(0),
    });
    let stream = build_stream(&turn, sequencer);
    let (stream, body) = match stream {
        Ok(pair) => pair,
        Err(_) => {
            let t = &turn.claimed;
            abandon(t.storage.as_ref(), &t.envelope, &t.turn_id, turn.clock.now_ms()).await;
            return Err(BoundaryError::Internal.into());
        }
    };
    watch_deadline(&turn, &deadline);
    stream.publish(Line::State);
    turn.published_revision.set(turn.controller.borrow().revision());
    let response = ndjson_response(&body).map_err(|_| Failure::Boundary(BoundaryError::Internal));
    let task_turn = turn.clone();
    spawn_local(async move {
        drive(&task_turn, &stream, first).await;
        finish(&task_turn, &stream).await;
        drop(deadline);
    });
    response
}

fn build_stream(turn: &Rc<Turn>, mut sequencer: TurnSequencer) -> Result<(PullStream<Line>, web_sys::ReadableStream), JsValue> {
    let encoder_turn = turn.clone();
    let encode = Box::new(move |line: Line, is_last: bool| {
        let sequence = if is_last { Some(sequencer.next_final()) } else { sequencer.next_intermediate() }?;
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
    let signal = deadline.signal.clone();
    let timeout = deadline.timeout_signal();
    let on_abort = Closure::once_into_js(move || {
        if let Some(turn) = weak.upgrade() {
            let reason = if timeout.aborted() { StopReason::Deadline } else { StopReason::ClientAbort };
            turn.request_stop(reason);
        }
    });
    if signal.aborted() {
        let _ = on_abort.dyn_ref::<Function>().map(|f| f.call0(&JsValue::UNDEFINED));
    } else if let Some(add) = get_fn(&signal, "addEventListener") {
        let _ = add.call2(&signal, &JsValue::from_str("abort"), &on_abort);
    }
}

impl Turn {
    fn request_stop(&self, reason: StopReason) {
        if self.stop_reason.get().is_none() && !self.stop.is_cancelled() {
            self.stop_reason.set(Some(reason));
        }
        self.stop.cancel();
    }

    /// Publishes the controller's state if it changed since the last publish.
    fn publish_if_changed(&self, stream: &PullStream<Line>) {
        let revision = self.controller.borrow().revision();
        if revision != self.published_revision.get() {
            self.published_revision.set(revision);
            stream.publish(Line::State);
        }
    }

    fn encode(&self, line: Line, sequence: u64) -> String {
        let envelope = Envelope {
            event_id: self.clock.new_id(),
            session_id: self.claimed.session_id.clone(),
            turn_id: self.claimed.turn_id.clone(),
            sequence,
            emitted_at: crate::core::checks::format_iso_millis(self.clock.now_ms() as i64),
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
            error: state.error.map(|_| BoundaryError::ChatTurnFailed.diagnostic()),
            lineage: Some(Lineage::Submit),
        }
    }

    fn ids(&self) -> impl FnMut(&str) -> String + '_ {
        move |prefix: &str| format!("{prefix}-{}", self.clock.new_id())
    }
}

/// In-stream diagnostics are always retryable (the response had already started).
fn in_stream(error: BoundaryError) -> TurnDiagnostic {
    TurnDiagnostic { retryable: true, ..error.diagnostic() }
}

/// A future that resolves when the turn's stop token fires.
fn stopped(stop: &CancelToken) -> JsFuture {
    let stop = stop.clone();
    JsFuture::from(js_sys::Promise::new(&mut |resolve, _| {
        stop.on_cancel(move || {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        });
    }))
}

/// Runs the controller's actions until it is done or the turn is stopped.
async fn drive(turn: &Turn, stream: &PullStream<Line>, first: Action) {
    let mut action = first;
    loop {
        turn.publish_if_changed(stream);
        action = match action {
            Action::CallModel(request) => match call_model(turn, stream, request).await {
                Some(next) => next,
                None => break,
            },
            Action::RunTools(invocations) => match run_tools(turn, stream, invocations).await {
                Some(next) => next,
                None => break,
            },
            Action::Continue | Action::Done => break,
        };
    }
    if turn.stop.is_cancelled() {
        turn.controller.borrow_mut().stop();
    }
    turn.publish_if_changed(stream);
}

/// One model call, chunk by chunk; `None` when the turn was stopped meanwhile.
async fn call_model(turn: &Turn, stream: &PullStream<Line>, request: crate::core::chat::model::ModelRequest) -> Option<Action> {
    let model = turn.claimed.definition.model.clone();
    let started = match race(model.start(request), stopped(&turn.stop)).await {
        Either::Left(started) => started,
        Either::Right(_) => return None,
    };
    let mut model_stream: Box<dyn ModelStream> = match started {
        Ok(s) => s,
        Err(_) => return Some(turn.controller.borrow_mut().on_model_error()),
    };
    loop {
        let next = race(model_stream.next_chunk(), stopped(&turn.stop)).await;
        let action = match next {
            Either::Right(_) => {
                model_stream.abort();
                return None;
            }
            Either::Left(None) => {
                let now = turn.clock.now_ms();
                let mut ids = turn.ids();
                return Some(turn.controller.borrow_mut().on_model_end(now, &mut ids));
            }
            Either::Left(Some(Err(_))) => return Some(turn.controller.borrow_mut().on_model_error()),
            Either::Left(Some(Ok(chunk))) => turn.controller.borrow_mut().on_chunk(chunk),
        };
        turn.publish_if_changed(stream);
        if !matches!(action, Action::Continue) {
            model_stream.abort();
            return Some(action);
        }
    }
}

/// Runs a round of tools one after another; `None` when the turn was stopped meanwhile.
async fn run_tools(
    turn: &Turn,
    stream: &PullStream<Line>,
    invocations: Vec<crate::core::chat::controller::ToolInvocation>,
) -> Option<Action> {
    let mut next = Action::Continue;
    for invocation in invocations {
        let tools = turn.claimed.definition.tools.clone();
        let Some(tool) = tools.iter().find(|t| t.spec().name == invocation.name) else {
            let now = turn.clock.now_ms();
            let mut ids = turn.ids();
            next = turn.controller.borrow_mut().on_tool_result(&invocation.id, Err("Unknown tool.".into()), now, &mut ids);
            continue;
        };
        turn.controller.borrow_mut().on_tool_started(&invocation.id);
        turn.publish_if_changed(stream);
        let outcome: ToolOutcome = match race(tool.execute(invocation.args, turn.stop.clone()), stopped(&turn.stop)).await {
            Either::Right(_) => return None,
            Either::Left(Ok(text)) => Ok(text),
            Either::Left(Err(_)) => Err("Tool failed.".into()),
        };
        let now = turn.clock.now_ms();
        let mut ids = turn.ids();
        next = turn.controller.borrow_mut().on_tool_result(&invocation.id, outcome, now, &mut ids);
        turn.publish_if_changed(stream);
    }
    Some(next)
}

/// Cleanup, once: save messages (bounded), release the lease by CAS (bounded), then close the
/// stream with the final line. A successful response closes only after both saves.
async fn finish(turn: &Turn, stream: &PullStream<Line>) {
    let budget_ms = turn.options.cleanup_timeout_ms;
    let messages = turn.controller.borrow().state().messages.clone();
    let memory = turn.claimed.definition.memory.clone();
    let saved = matches!(within_ms(budget_ms, memory.save(&messages)).await, Some(Ok(())));
    let outcome = if saved { TurnOutcome::Completed } else { TurnOutcome::Indeterminate };
    let claimed = &turn.claimed;
    let released = match release_turn(&claimed.envelope, &claimed.turn_id, outcome, turn.clock.now_ms()) {
        Ok(next) => within_ms(budget_ms, claimed.storage.save(&next.to_value(), Some(claimed.envelope.cursor))).await,
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
