//! Runs one turn: feeds a [`ChatController`] from a [`ModelAdapter`] and [`Tool`]s until it is
//! done or the stop token fires, publishing every new state.
//!
//! The controller decides everything; the driver only performs its actions. Tools of a round
//! run one after another. When `stop` fires, whatever is awaited (model start, next chunk,
//! tool) is dropped, an open model stream is aborted, and the controller is stopped, which
//! keeps the partial text. A model stream that goes quiet after its first chunk for
//! `model_stall_ms` (checked at ticks of half that, so it is ended between one and one and a
//! half times it after its last chunk) is aborted and ends as a model failure: a hung provider
//! costs seconds, not the turn's whole deadline. After each input fed to the controller, a changed state reaches
//! `publish` as `(revision, state)`: in order, at most once per revision, and one call for all
//! the revisions a single input bumped. A consumer that keeps only the latest (the handler's
//! single pending snapshot slot) coalesces further. Each model call and tool run goes to the
//! turn's step log (`TurnPorts::steps`, [`super::steps`]) as it ends, for the operator's metrics
//! and traces.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use turnkeep_core::chat::controller::SendError;
use turnkeep_core::chat::{
    Action, ChatController, ChatState, ModelChunk, ModelRequest, ToolInvocation, ToolOutcome,
};
use turnkeep_ports::chat::{
    CancelToken, Clock, Ids, ModelAdapter, ModelStream, Sleep, Tool, ToolContext, ToolFailure,
};
use turnkeep_ports::{LocalFuture, PortError};

use super::fault::Stage;
use super::race::{race, Either};
use super::steps::{ModelCall, Step, StepEnd, StepLog, ToolRun};

use super::stop::StopWatch;

/// The error text recorded on a tool call whose tool failed. Fixed, because a tool's own
/// error message is for logs only.
pub const TOOL_FAILED: &str = "The tool failed.";

/// What a turn needs from the world.
#[derive(Clone, Copy)]
pub struct TurnPorts<'a> {
    pub model: &'a dyn ModelAdapter,
    /// Looked up by `spec().name`; should match the controller's `ChatConfig::tools`.
    pub tools: &'a [&'a dyn Tool],
    pub clock: &'a dyn Clock,
    pub ids: &'a dyn Ids,
    /// The stall watch's timer.
    pub sleep: &'a dyn Sleep,
    /// How long a model stream may go quiet after its first chunk (`TurnLimits::model_stall_ms`).
    pub model_stall_ms: u64,
    /// Told about every model or tool failure (the controller records only a fixed text; the
    /// operator gets the failure itself).
    pub report: &'a dyn Fn(Stage, PortError),
    /// Where each model call and tool run is recorded (for the operator's metrics and traces).
    pub steps: Option<&'a StepLog>,
    /// Where the turn is recorded durably before the driver acts on what a model or a tool
    /// produced (the turn's journal), and where its calls' idempotency keys come from. `None`:
    /// nothing is recorded and calls get no key but an approval's (tests of the driver alone).
    pub recorder: Option<&'a dyn TurnRecorder>,
}

/// The turn's journal, as the driver sees it (`turn::run` writes it to the session envelope).
pub trait TurnRecorder {
    /// Records the turn's messages in `state` durably. `false`: not recorded (another claim
    /// fenced the turn, the store failed, the journal would be over its limit; the cause went to
    /// the operator): the driver stops the turn before anything acts on it.
    fn record(&self, state: &ChatState) -> LocalFuture<'_, bool>;
    /// The idempotency key of call `call_id` of this turn (`core::session::tool_idempotency_key`).
    fn idempotency_key(&self, call_id: &str) -> String;
}

/// Sends `input` and runs the turn to its end. Returns the final state, or the reason `send`
/// refused (nothing ran then).
pub async fn run_turn(
    controller: &RefCell<ChatController>,
    input: &str,
    ports: TurnPorts<'_>,
    stop: &CancelToken,
    publish: &mut dyn FnMut(u64, &ChatState),
) -> Result<ChatState, SendError> {
    let first = begin_turn(controller, input, ports)?;
    drive_turn(controller, first, ports, stop, publish).await;
    let state = controller.borrow().state().clone();
    Ok(state)
}

/// Sends `input`: the user message and an empty assistant message exist afterwards, and the
/// returned action starts the model. A handler calls this before it answers the request, so a
/// refused input never opens a stream.
pub fn begin_turn(
    controller: &RefCell<ChatController>,
    input: &str,
    ports: TurnPorts<'_>,
) -> Result<Action, SendError> {
    let now_ms = ports.clock.now_ms();
    controller
        .borrow_mut()
        .send(input, now_ms, &mut |p: &str| ports.ids.next_id(p))
}

/// Performs `first` and every action after it until the controller is done or `stop` fires.
///
/// The controller sits in a `RefCell` so that a consumer may read its state at any moment
/// (the handler encodes a snapshot when a reader pulls): the driver borrows it mutably only
/// for one synchronous input at a time, never across an `await`, and calls `publish` under a
/// shared borrow.
pub async fn drive_turn(
    controller: &RefCell<ChatController>,
    first: Action,
    ports: TurnPorts<'_>,
    stop: &CancelToken,
    publish: &mut dyn FnMut(u64, &ChatState),
) {
    let mut turn = Turn {
        controller,
        ports,
        stop,
        watch: StopWatch::new(stop),
        publish,
        published: None,
    };
    let mut action = first;
    turn.publish_if_changed();
    loop {
        if turn.watch.is_stopped() {
            turn.controller.borrow_mut().stop();
            break;
        }
        action = match action {
            Action::CallModel(request) => turn.call_model(request).await,
            Action::RunTools(invocations) => turn.run_tools(invocations).await,
            // Continue never follows a settled step; treat it as the end rather than spin.
            Action::Continue | Action::Done => break,
        };
        turn.publish_if_changed();
    }
    turn.publish_if_changed();
}

/// Resolves once a stream that has sent a chunk sends none for two ticks of `stall_ms / 2` in a
/// row (between `stall_ms` and 1.5 × `stall_ms` after its last chunk). One timer per tick, not
/// one per chunk; before the first chunk it only waits (the turn's deadline bounds that).
async fn stall_watch(sleep: &dyn Sleep, stall_ms: u64, chunks: &Cell<u64>) {
    let tick_ms = (stall_ms / 2).max(1);
    let mut seen = chunks.get();
    let mut quiet_ticks = 0;
    loop {
        sleep.sleep(tick_ms).await;
        let now = chunks.get();
        quiet_ticks = if now == seen && now > 0 {
            quiet_ticks + 1
        } else {
            0
        };
        seen = now;
        if quiet_ticks >= 2 {
            return;
        }
    }
}

struct Turn<'t, 'p> {
    controller: &'t RefCell<ChatController>,
    ports: TurnPorts<'p>,
    stop: &'t CancelToken,
    watch: StopWatch,
    publish: &'t mut dyn FnMut(u64, &ChatState),
    published: Option<u64>,
}

impl Turn<'_, '_> {
    /// One model call, recorded in the step log.
    async fn call_model(&mut self, request: ModelRequest) -> Action {
        let started_ms = self.ports.clock.now_ms();
        let call = RefCell::new(ModelCall {
            started_ms,
            ended_ms: started_ms,
            first_chunk_ms: None,
            finish: None,
            usage: None,
            end: StepEnd::Ok,
        });
        let action = self.model_call(request, &call).await;
        if let Some(steps) = self.ports.steps {
            let mut call = call.into_inner();
            call.ended_ms = self.ports.clock.now_ms();
            if self.watch.is_stopped() && call.end == StepEnd::Ok {
                call.end = StepEnd::Stopped;
            }
            steps.record(Step::Model(call));
        }
        action
    }

    /// One model call, chunk by chunk. Returns `Done` when stopped (the loop then stops the
    /// controller) or when the controller ended the turn.
    async fn model_call(&mut self, request: ModelRequest, call: &RefCell<ModelCall>) -> Action {
        let started = match self
            .watch
            .until_stopped(self.ports.model.start(request))
            .await
        {
            None => return Action::Done,
            Some(started) => started,
        };
        let mut stream: Box<dyn ModelStream> = match started {
            Ok(stream) => stream,
            Err(e) => {
                call.borrow_mut().end = StepEnd::Failed;
                (self.ports.report)(Stage::Model, e);
                return self.controller.borrow_mut().on_model_error();
            }
        };
        let chunks = Cell::new(0_u64);
        let ports = self.ports;
        let reading = self.read_model(stream.as_mut(), &chunks, call);
        match race(
            reading,
            stall_watch(ports.sleep, ports.model_stall_ms, &chunks),
        )
        .await
        {
            Either::Left(action) => action,
            Either::Right(()) => {
                stream.abort();
                let stalled = format!(
                    "the model stream sent nothing for {} ms after its last chunk",
                    ports.model_stall_ms
                );
                call.borrow_mut().end = StepEnd::Failed;
                (ports.report)(Stage::Model, PortError::new(stalled));
                self.controller.borrow_mut().on_model_error()
            }
        }
    }

    /// The model stream, chunk by chunk, counted in `chunks` (for the stall watch).
    async fn read_model(
        &mut self,
        stream: &mut dyn ModelStream,
        chunks: &Cell<u64>,
        call: &RefCell<ModelCall>,
    ) -> Action {
        loop {
            let next = match self.watch.until_stopped(stream.next_chunk()).await {
                None => {
                    stream.abort();
                    return Action::Done;
                }
                Some(next) => next,
            };
            chunks.set(chunks.get() + 1);
            if let Some(Ok(chunk)) = &next {
                let mut call = call.borrow_mut();
                call.first_chunk_ms
                    .get_or_insert_with(|| self.ports.clock.now_ms());
                if let ModelChunk::Finish { reason, usage } = chunk {
                    call.finish = Some(*reason);
                    call.usage = *usage;
                }
            }
            let action = match next {
                None => return self.on_model_end(),
                Some(Err(e)) => {
                    call.borrow_mut().end = StepEnd::Failed;
                    stream.abort();
                    (self.ports.report)(Stage::Model, e);
                    return self.controller.borrow_mut().on_model_error();
                }
                Some(Ok(chunk)) => self.controller.borrow_mut().on_chunk(chunk),
            };
            self.publish_if_changed();
            if action != Action::Continue {
                stream.abort();
                return action;
            }
        }
    }

    fn on_model_end(&mut self) -> Action {
        let (now_ms, ids) = (self.ports.clock.now_ms(), self.ports.ids);
        self.controller
            .borrow_mut()
            .on_model_end(now_ms, &mut |p: &str| ids.next_id(p))
    }

    /// Records the turn ([`TurnRecorder::record`]); `false` stops it here.
    async fn record(&mut self) -> bool {
        let Some(recorder) = self.ports.recorder else {
            return true;
        };
        let recording = recorder.record(self.controller.borrow().state());
        recording.await
    }

    /// A round of tools, one after another: the round is recorded before the first runs (its
    /// calls and their ids fixed), each result before the next step (the model reads results
    /// only once they are recorded). A record that fails stops the turn there.
    async fn run_tools(&mut self, invocations: Vec<ToolInvocation>) -> Action {
        if !self.record().await {
            self.controller.borrow_mut().stop();
            return Action::Done;
        }
        let mut next = Action::Continue;
        for mut invocation in invocations {
            if let (None, Some(recorder)) = (&invocation.idempotency_key, self.ports.recorder) {
                invocation.idempotency_key = Some(recorder.idempotency_key(&invocation.id));
            }
            let tools = self.ports.tools;
            let tool = tools.iter().find(|t| t.spec().name == invocation.name);
            let (started_ms, steps) = (self.ports.clock.now_ms(), self.ports.steps);
            let record = |end: StepEnd, ended_ms: u64| {
                if let Some(steps) = steps {
                    steps.record(Step::Tool(ToolRun {
                        name: invocation.name.clone(),
                        call_id: invocation.id.clone(),
                        started_ms,
                        ended_ms,
                        end,
                    }));
                }
            };
            let outcome: ToolOutcome = match tool {
                None => Err(turnkeep_core::chat::controller::UNKNOWN_TOOL.to_owned()),
                Some(tool) => {
                    self.controller.borrow_mut().on_tool_started(&invocation.id);
                    self.publish_if_changed();
                    let (messages, call) = {
                        let controller = self.controller.borrow();
                        let messages = &controller.state().messages;
                        let call = messages
                            .iter()
                            .flat_map(|m| m.tool_calls.iter().flatten())
                            .find(|c| c.id == invocation.id)
                            .cloned();
                        (Rc::from(messages.as_slice()), call)
                    };
                    let context = ToolContext {
                        cancel: self.stop.clone(),
                        tool_call_id: invocation.id.clone(),
                        idempotency_key: invocation.idempotency_key.clone(),
                        messages,
                        call,
                    };
                    let running = tool.execute(invocation.args, context);
                    match self.watch.until_stopped(running).await {
                        None => {
                            record(StepEnd::Stopped, self.ports.clock.now_ms());
                            return Action::Done;
                        }
                        Some(Ok(text)) => Ok(text),
                        Some(Err(ToolFailure::InvalidInput(issues))) => {
                            Err(issues.text(&invocation.name))
                        }
                        Some(Err(ToolFailure::Failed(e))) => {
                            (self.ports.report)(Stage::Tool, e);
                            Err(TOOL_FAILED.to_owned())
                        }
                    }
                }
            };
            let (now_ms, ids) = (self.ports.clock.now_ms(), self.ports.ids);
            record(
                if outcome.is_ok() {
                    StepEnd::Ok
                } else {
                    StepEnd::Failed
                },
                now_ms,
            );
            next = self.controller.borrow_mut().on_tool_result(
                &invocation.id,
                outcome,
                now_ms,
                &mut |p: &str| ids.next_id(p),
            );
            if !self.record().await {
                self.controller.borrow_mut().stop();
                self.publish_if_changed();
                return Action::Done;
            }
            self.publish_if_changed();
        }
        next
    }

    fn publish_if_changed(&mut self) {
        let controller = self.controller.borrow();
        let revision = controller.revision();
        if self.published != Some(revision) {
            self.published = Some(revision);
            (self.publish)(revision, controller.state());
        }
    }
}
