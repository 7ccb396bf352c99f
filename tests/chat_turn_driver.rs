//! The async turn driver on the host: it must reach exactly the state the synchronous test
//! driver reaches, publish every revision once and in order, and honour stop at each await.
#![cfg(not(target_arch = "wasm32"))]

mod chat_support;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use chat_support::{drive, NOW_MS};
use futures::executor::block_on;
use serde_json::{json, Map, Value};
use turnkeep::core::chat::demo::{demo_script, demo_tools, run_demo_tool};
use turnkeep::core::chat::{
    ChatConfig, ChatController, ChatError, ChatState, ChatStatus, ModelChunk, ModelRequest,
    ToolSpec,
};
use turnkeep::core::protocol::{MessageStatus, ToolCallStatus};
use turnkeep::ports::chat::{
    CancelToken, Clock, Ids, ModelAdapter, ModelStream, Sleep, Tool, ToolContext, ToolFailure,
};
use turnkeep::ports::{LocalFuture, PortError};
use turnkeep::turn::{run_turn, DemoModel, DemoTool, TurnPorts, TOOL_FAILED};

struct FixedClock;
impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        NOW_MS
    }
}

/// `msg-1`, `call-2`, ... exactly as `chat_support::counter_ids`.
#[derive(Default)]
struct CounterIds(Cell<u32>);
impl Ids for CounterIds {
    fn next_id(&self, prefix: &str) -> String {
        self.0.set(self.0.get() + 1);
        format!("{prefix}-{}", self.0.get())
    }
}

struct Run {
    result: ChatState,
    published: Vec<(u64, ChatState)>,
}

/// A timer that never fires: the stall watch stays quiet (these turns run on `block_on`).
struct Quiet;
impl Sleep for Quiet {
    fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
        Box::pin(Never)
    }
}

fn run(model: &dyn ModelAdapter, tools: &[&dyn Tool], input: &str, stop: &CancelToken) -> Run {
    run_with(model, tools, input, stop, &Quiet, &|_, _| {})
}

fn run_with(
    model: &dyn ModelAdapter,
    tools: &[&dyn Tool],
    input: &str,
    stop: &CancelToken,
    sleep: &dyn Sleep,
    report: &dyn Fn(turnkeep::turn::Stage, PortError),
) -> Run {
    let specs: Vec<ToolSpec> = tools.iter().map(|t| t.spec().clone()).collect();
    let controller = std::cell::RefCell::new(ChatController::new(
        ChatConfig {
            tools: specs,
            ..ChatConfig::default()
        },
        Vec::new(),
    ));
    let ids = CounterIds::default();
    let ports = TurnPorts {
        model,
        tools,
        clock: &FixedClock,
        ids: &ids,
        sleep,
        model_stall_ms: 10_000,
        report,
        steps: None,
        recorder: None,
    };
    let mut published = Vec::new();
    let result = block_on(run_turn(
        &controller,
        input,
        ports,
        stop,
        &mut |rev, state: &ChatState| published.push((rev, state.clone())),
    ))
    .expect("send accepted");
    assert_eq!(&result, controller.borrow().state());
    Run { result, published }
}

/// Published revisions strictly increase, and the last publication is the final state.
fn assert_published_in_order(r: &Run) {
    assert!(!r.published.is_empty());
    assert!(
        r.published.windows(2).all(|w| w[0].0 < w[1].0),
        "revisions strictly increase"
    );
    assert_eq!(r.published.last().map(|p| &p.1), Some(&r.result));
}

#[test]
fn the_async_driver_reaches_the_same_state_as_the_sync_one_for_every_demo_input() {
    let tools = DemoTool::all();
    let tool_refs: Vec<&dyn Tool> = tools.iter().map(|t| t as &dyn Tool).collect();
    for input in [
        "hello there",
        "/words 4",
        "/tool cats",
        "/confirm 7",
        "/fail",
        "/tool",
    ] {
        let r = run(
            &DemoModel::new(None, 20),
            &tool_refs,
            input,
            &CancelToken::new(),
        );
        let mut expected = ChatController::new(
            ChatConfig {
                tools: demo_tools(),
                ..ChatConfig::default()
            },
            Vec::new(),
        );
        let sync_revisions = drive(
            &mut expected,
            input,
            &mut |req: &ModelRequest| demo_script(req),
            &mut |i| run_demo_tool(&i.name, &i.args),
        );
        assert_eq!(&r.result, expected.state(), "input {input:?}");
        assert_published_in_order(&r);
        // Every distinct revision the sync driver saw was published, none twice.
        let mut distinct = sync_revisions.clone();
        distinct.dedup();
        let published: Vec<u64> = r.published.iter().map(|p| p.0).collect();
        assert_eq!(published, distinct[1..], "input {input:?}");
    }
}

/// A sleep port that records each pause and returns at once.
#[derive(Default)]
struct RecordingSleep(RefCell<Vec<u64>>);
impl Sleep for RecordingSleep {
    fn sleep(&self, ms: u64) -> LocalFuture<'_, ()> {
        self.0.borrow_mut().push(ms);
        Box::pin(async {})
    }
}

#[test]
fn the_demo_model_pauses_before_each_streamed_chunk() {
    let sleep = Rc::new(RecordingSleep::default());
    let model = DemoModel::new(Some(sleep.clone() as Rc<dyn Sleep>), 35);
    let r = run(&model, &[], "/words 3", &CancelToken::new());
    assert_eq!(r.result.messages[1].content, "w1 w2 w3");
    assert_eq!(*sleep.0.borrow(), [35, 35, 35]);
}

/// A future that never finishes (a model or tool that hangs).
struct Never;
impl Future for Never {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// Streams `chunks`, then fires `stop` and hangs: only the stop can end the turn.
struct StopsMidStream {
    chunks: Vec<&'static str>,
    stop: CancelToken,
    aborted: Rc<Cell<bool>>,
}

struct StopsMidStreamStream {
    chunks: Vec<&'static str>,
    stop: CancelToken,
    aborted: Rc<Cell<bool>>,
}

impl ModelAdapter for StopsMidStream {
    fn start(&self, _: ModelRequest) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        let stream = StopsMidStreamStream {
            chunks: self.chunks.clone(),
            stop: self.stop.clone(),
            aborted: self.aborted.clone(),
        };
        Box::pin(async move { Ok(Box::new(stream) as Box<dyn ModelStream>) })
    }
}

impl ModelStream for StopsMidStreamStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        if self.chunks.is_empty() {
            let stop = self.stop.clone();
            return Box::pin(async move {
                stop.cancel();
                Never.await;
                None
            });
        }
        let chunk = self.chunks.remove(0);
        Box::pin(async move { Some(Ok(ModelChunk::Text(chunk.into()))) })
    }

    fn abort(&mut self) {
        self.aborted.set(true);
    }
}

#[test]
fn stop_mid_stream_aborts_the_model_and_keeps_the_partial_text() {
    let stop = CancelToken::new();
    let aborted = Rc::new(Cell::new(false));
    let model = StopsMidStream {
        chunks: vec!["par", "tial"],
        stop: stop.clone(),
        aborted: aborted.clone(),
    };
    let r = run(&model, &[], "hi", &stop);
    assert!(aborted.get(), "the open stream was aborted");
    assert_eq!(r.result.status, ChatStatus::Complete);
    assert_eq!(r.result.messages[1].content, "partial");
    assert_eq!(r.result.messages[1].status, MessageStatus::Complete);
    assert_published_in_order(&r);
}

/// Calls tool `slow` once; the tool fires the stop and hangs.
struct CallsSlowTool;
impl ModelAdapter for CallsSlowTool {
    fn start(&self, _: ModelRequest) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        Box::pin(async {
            Ok(Box::new(Script(vec![ModelChunk::ToolCall {
                index: 0,
                id: Some("s1".into()),
                name: Some("slow".into()),
                args_delta: "{}".into(),
            }])) as Box<dyn ModelStream>)
        })
    }
}

struct Script(Vec<ModelChunk>);
impl ModelStream for Script {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        let next = (!self.0.is_empty()).then(|| Ok(self.0.remove(0)));
        Box::pin(async move { next })
    }
    fn abort(&mut self) {
        self.0.clear();
    }
}

struct SlowTool {
    spec: ToolSpec,
    seen_cancel: RefCell<Option<CancelToken>>,
}
impl Tool for SlowTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn execute(
        &self,
        _: Map<String, Value>,
        context: ToolContext,
    ) -> LocalFuture<'_, Result<String, ToolFailure>> {
        let cancel = context.cancel;
        *self.seen_cancel.borrow_mut() = Some(cancel.clone());
        Box::pin(async move {
            cancel.cancel(); // the client goes away while the tool runs
            Never.await;
            Ok("never".into())
        })
    }
}

#[test]
fn stop_while_a_tool_runs_cancels_the_tool_and_marks_the_call() {
    let tool = SlowTool {
        spec: ToolSpec {
            name: "slow".into(),
            description: String::new(),
            parameters: json!({}),
            requires_confirmation: false,
            host_validates: false,
        },
        seen_cancel: RefCell::new(None),
    };
    let stop = CancelToken::new();
    let r = run(&CallsSlowTool, &[&tool], "go", &stop);
    assert!(tool
        .seen_cancel
        .borrow()
        .as_ref()
        .is_some_and(CancelToken::is_cancelled));
    let call = &r.result.messages[1].tool_calls.as_ref().expect("calls")[0];
    assert_eq!(call.status, ToolCallStatus::Error);
    assert_eq!(r.result.status, ChatStatus::Complete);
}

struct FailingStart;
impl ModelAdapter for FailingStart {
    fn start(&self, _: ModelRequest) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        Box::pin(async { Err(PortError::new("connection refused: internal detail")) })
    }
}

/// A tool that fails with an internal message, which must not reach the state.
struct Broken(ToolSpec);
impl Tool for Broken {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn execute(
        &self,
        _: Map<String, Value>,
        _: ToolContext,
    ) -> LocalFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async { Err(PortError::new("stack trace with secrets").into()) })
    }
}

#[test]
fn failures_end_in_clear_states_without_leaking_port_messages() {
    let r = run(&FailingStart, &[], "hi", &CancelToken::new());
    assert_eq!(
        (r.result.status, r.result.error),
        (ChatStatus::Error, Some(ChatError::ModelFailed))
    );

    let broken = Broken(ToolSpec {
        name: "slow".into(),
        description: String::new(),
        parameters: json!({}),
        requires_confirmation: false,
        host_validates: false,
    });
    let r = run(&CallsSlowTool, &[&broken], "go", &CancelToken::new());
    let call = &r.result.messages[1].tool_calls.as_ref().expect("calls")[0];
    assert_eq!(call.error.as_deref(), Some(TOOL_FAILED));
    let json = turnkeep::core::protocol::messages_to_value(&r.result.messages).to_string();
    assert!(!json.contains("secret"));
    // This model asks for the tool on every call, so the loop ends at the default cap.
    assert_eq!(
        r.result.error,
        Some(ChatError::ToolIterationsExceeded { max: 5 })
    );
}

#[test]
fn a_stop_before_the_turn_starts_ends_it_at_once() {
    let stop = CancelToken::new();
    stop.cancel();
    let r = run(&DemoModel::new(None, 0), &[], "hi", &stop);
    assert_eq!(r.result.status, ChatStatus::Complete);
    assert_eq!(
        r.result.messages.len(),
        1,
        "only the user message; the empty assistant message is dropped"
    );
    assert_published_in_order(&r);
}

/// Streams `chunks`, then hangs without closing (a provider that stopped sending).
struct GoesQuiet {
    chunks: Vec<&'static str>,
    aborted: Rc<Cell<bool>>,
}

impl ModelAdapter for GoesQuiet {
    fn start(&self, _: ModelRequest) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        let stream = GoesQuiet {
            chunks: self.chunks.clone(),
            aborted: self.aborted.clone(),
        };
        Box::pin(async move { Ok(Box::new(stream) as Box<dyn ModelStream>) })
    }
}

impl ModelStream for GoesQuiet {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        if self.chunks.is_empty() {
            return Box::pin(async {
                Never.await;
                None
            });
        }
        let chunk = self.chunks.remove(0);
        Box::pin(async move { Some(Ok(ModelChunk::Text(chunk.into()))) })
    }

    fn abort(&mut self) {
        self.aborted.set(true);
    }
}

/// A timer that fires at once: every tick of the stall watch passes with no chunk.
struct AtOnce;
impl Sleep for AtOnce {
    fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
        Box::pin(async {})
    }
}

#[test]
fn a_model_stream_that_goes_quiet_mid_answer_is_aborted_and_ends_as_a_model_failure() {
    let aborted = Rc::new(Cell::new(false));
    let model = GoesQuiet {
        chunks: vec!["half ", "an answer"],
        aborted: aborted.clone(),
    };
    let reports = RefCell::new(Vec::new());
    let report = |stage: turnkeep::turn::Stage, e: PortError| {
        reports.borrow_mut().push(format!("{stage:?}: {e}"))
    };
    let r = run_with(&model, &[], "hi", &CancelToken::new(), &AtOnce, &report);
    assert!(aborted.get(), "the stream is aborted");
    let answer = &r.result.messages[1];
    assert_eq!(answer.status, MessageStatus::Error, "{answer:?}");
    let reports = reports.borrow();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(
        reports[0].contains("sent nothing for 10000 ms"),
        "the operator is told why: {reports:?}"
    );
}
