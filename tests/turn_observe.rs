//! What the operator's metrics (`turn::metrics`, for `onMetric`) and traces (`turn::spans`, for
//! a `tracer`) say of an ended turn: pure functions of its summary, checked case by case, then
//! drawn from whole turns of the demo model (the driver's step log: model calls, tool runs and
//! approvals, on the simulated world's clock).
#![cfg(not(target_arch = "wasm32"))]

mod turn_support;

use std::rc::Rc;

use serde_json::{json, Value};
use turn_support::*;
use turnkeep::core::chat::{FinishReason, Usage};
use turnkeep::ports::chat::ModelInfo;
use turnkeep::turn::metrics::turn_metrics;
use turnkeep::turn::spans::{turn_spans, AttrValue, SpanKind, SpanRecord};
use turnkeep::turn::steps::{ModelCall, Step, StepEnd, ToolRun};
use turnkeep::turn::summary::{Approval, TurnSummary};
use turnkeep::turn::{
    admit, open, resolve, run, Interrupt, Resolution, ResolveRequest, Turn, TurnEnd,
};

const SESSION: &str = "s1";

fn model(started_ms: u64, first_chunk_ms: Option<u64>, ended_ms: u64, end: StepEnd) -> Step {
    Step::Model(ModelCall {
        started_ms,
        ended_ms,
        first_chunk_ms,
        finish: (end == StepEnd::Ok).then_some(FinishReason::Stop),
        usage: (end == StepEnd::Ok).then(|| Usage::new(3, 5)),
        end,
    })
}

fn tool(name: &str, started_ms: u64, ended_ms: u64, end: StepEnd) -> Step {
    Step::Tool(ToolRun {
        name: name.into(),
        call_id: format!("call-{name}"),
        started_ms,
        ended_ms,
        end,
    })
}

fn pending(tool_name: &str, started_ms: u64, ended_ms: u64) -> Approval {
    Approval {
        tool_name: tool_name.into(),
        call_id: format!("call-{tool_name}"),
        decision: "pending",
        started_ms,
        ended_ms,
    }
}

/// A turn of session `s1` from 1,000 to 1,250 ms on its clock.
fn summary(
    outcome: &'static str,
    finish_reason: &'static str,
    steps: Vec<Step>,
    approvals: Vec<Approval>,
) -> TurnSummary {
    let model_calls = steps.iter().filter(|s| matches!(s, Step::Model(_))).count() as u32;
    TurnSummary {
        session_id: SESSION.into(),
        turn_id: "t1".into(),
        outcome,
        finish_reason,
        usage: Usage::new(3 * model_calls as u64, 5 * model_calls as u64),
        duration_ms: 250,
        error_code: None,
        agent: "demo".into(),
        model: ModelInfo {
            provider: Some("openai".into()),
            model: Some("gpt-test".into()),
        },
        started_ms: 1_000,
        ended_ms: 1_250,
        tool_calls: steps.len() as u32 - model_calls,
        model_calls,
        steps,
        approvals,
    }
}

/// The metrics of `input` as `(name, value)`, and the one outcome they all carry.
fn check_metrics(input: &TurnSummary, expected: &[(&str, u64)], outcome: &str) {
    let records = turn_metrics(input);
    let got: Vec<(String, u64)> = records
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["value"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = expected
        .iter()
        .map(|(n, v)| ((*n).to_owned(), *v))
        .collect();
    assert_eq!(got, want, "{input:?}");
    for record in &records {
        assert_eq!(record["outcome"], outcome, "{record}");
    }
}

#[test]
fn a_turn_s_metrics_are_its_duration_first_chunk_calls_approvals_and_tokens() {
    let answered = summary(
        "completed",
        "stop",
        vec![model(1_000, Some(1_040), 1_200, StepEnd::Ok)],
        vec![],
    );
    let tokens = |n: u64| {
        [
            ("usage.input_tokens", 3 * n),
            ("usage.output_tokens", 5 * n),
            ("usage.total_tokens", 8 * n),
        ]
    };
    let counts = |models, tools, asked| {
        [
            ("model.calls", models),
            ("tool.calls", tools),
            ("approval.requested", asked),
        ]
    };
    let with = |head: &[(&'static str, u64)], models, tools, asked, n| {
        let mut all = head.to_vec();
        all.extend(counts(models, tools, asked));
        all.extend(tokens(n));
        all
    };
    check_metrics(
        &answered,
        &with(
            &[("turn.duration_ms", 250), ("turn.first_chunk_ms", 40)],
            1,
            0,
            0,
            1,
        ),
        "ok",
    );

    let looped = summary(
        "completed",
        "tool-calls",
        vec![
            model(1_000, Some(1_010), 1_050, StepEnd::Ok),
            tool("lookup", 1_050, 1_090, StepEnd::Ok),
            model(1_090, Some(1_100), 1_150, StepEnd::Ok),
        ],
        vec![pending("transfer", 1_150, 1_250)],
    );
    check_metrics(
        &looped,
        &with(
            &[("turn.duration_ms", 250), ("turn.first_chunk_ms", 10)],
            2,
            1,
            1,
            2,
        ),
        "ok",
    );

    // A model that never sent a chunk has no time to first chunk.
    let silent = summary(
        "completed",
        "error",
        vec![model(1_000, None, 1_100, StepEnd::Failed)],
        vec![],
    );
    check_metrics(
        &silent,
        &with(&[("turn.duration_ms", 250)], 1, 0, 0, 1),
        "error",
    );

    // The outcome: cancelled for a stop or a takeover, error for a failure, a timeout or an
    // incomplete record.
    for (outcome, finish, expected) in [
        ("completed", "stopped", "cancelled"),
        ("completed", "fenced", "cancelled"),
        ("completed", "timeout", "error"),
        ("indeterminate", "stop", "error"),
        ("indeterminate", "stopped", "error"),
    ] {
        let turn = summary(outcome, finish, vec![], vec![]);
        check_metrics(
            &turn,
            &with(&[("turn.duration_ms", 250)], 0, 0, 0, 0),
            expected,
        );
    }
}

#[test]
fn a_metric_record_has_the_ask_handler_s_shape_with_the_turn_s_ids_and_no_text() {
    let answered = summary(
        "completed",
        "stop",
        vec![model(1_000, Some(1_040), 1_200, StepEnd::Ok)],
        vec![],
    );
    let first = &turn_metrics(&answered)[0];
    assert_eq!(
        first,
        &json!({
            "protocol": "turnkeep.chat.turn-metric",
            "version": 1,
            "name": "turn.duration_ms",
            "sessionId": "s1",
            "turnId": "t1",
            "value": 250,
            "unit": "ms",
            "outcome": "ok",
            "emittedAt": "1970-01-01T00:00:01.250Z",
        })
    );
    let units: Vec<Value> = turn_metrics(&answered)
        .iter()
        .map(|r| r["unit"].clone())
        .collect();
    assert_eq!(
        units,
        ["ms", "ms", "count", "count", "count", "tokens", "tokens", "tokens"]
    );
}

/// A span as `(name, kind, parent, start, end, error.type)`.
type Shape = (
    &'static str,
    SpanKind,
    Option<usize>,
    u64,
    u64,
    Option<&'static str>,
);

fn check_spans(input: &TurnSummary, expected: &[Shape]) {
    let got: Vec<(String, SpanKind, Option<usize>, u64, u64, Option<String>)> = turn_spans(input)
        .into_iter()
        .map(|s| (s.name, s.kind, s.parent, s.start_ms, s.end_ms, s.error))
        .collect();
    let want: Vec<_> = expected
        .iter()
        .map(|(n, k, p, s, e, err)| ((*n).to_owned(), *k, *p, *s, *e, err.map(str::to_owned)))
        .collect();
    assert_eq!(got, want, "{input:?}");
}

fn attribute<'a>(span: &'a SpanRecord, name: &str) -> Option<&'a AttrValue> {
    span.attributes
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

fn s(value: &str) -> AttrValue {
    AttrValue::Str(value.into())
}

#[test]
fn a_turn_s_spans_are_the_turn_then_each_model_call_tool_run_and_approval_under_it() {
    use SpanKind::{Client, Internal};
    let looped = summary(
        "completed",
        "tool-calls",
        vec![
            model(1_000, Some(1_010), 1_050, StepEnd::Ok),
            tool("lookup", 1_050, 1_090, StepEnd::Failed),
            model(1_090, Some(1_100), 1_150, StepEnd::Ok),
        ],
        vec![pending("transfer", 1_150, 1_250)],
    );
    check_spans(
        &looped,
        &[
            ("invoke_agent demo", Internal, None, 1_000, 1_250, None),
            ("chat gpt-test", Client, Some(0), 1_000, 1_050, None),
            (
                "execute_tool lookup",
                Internal,
                Some(0),
                1_050,
                1_090,
                Some("tool_error"),
            ),
            ("chat gpt-test", Client, Some(0), 1_090, 1_150, None),
            ("approval transfer", Internal, Some(0), 1_150, 1_250, None),
        ],
    );
    // A failed model call, a turn that failed, and one whose record is incomplete (its
    // registry code is the error's type); a stopped one is no error.
    let mut failed = summary(
        "completed",
        "error",
        vec![model(1_000, None, 1_100, StepEnd::Failed)],
        vec![],
    );
    check_spans(
        &failed,
        &[
            (
                "invoke_agent demo",
                Internal,
                None,
                1_000,
                1_250,
                Some("error"),
            ),
            (
                "chat gpt-test",
                Client,
                Some(0),
                1_000,
                1_100,
                Some("model_error"),
            ),
        ],
    );
    failed.outcome = "indeterminate";
    failed.finish_reason = "stop";
    failed.error_code = Some("SERVER_INTERNAL");
    failed.steps.clear();
    check_spans(
        &failed,
        &[(
            "invoke_agent demo",
            Internal,
            None,
            1_000,
            1_250,
            Some("SERVER_INTERNAL"),
        )],
    );
    let stopped = summary(
        "completed",
        "stopped",
        vec![model(1_000, Some(1_010), 1_100, StepEnd::Stopped)],
        vec![],
    );
    check_spans(
        &stopped,
        &[
            ("invoke_agent demo", Internal, None, 1_000, 1_250, None),
            ("chat gpt-test", Client, Some(0), 1_000, 1_100, None),
        ],
    );
    // A model that does not name itself: `chat`, no model attributes.
    let mut unnamed = summary(
        "completed",
        "stop",
        vec![model(1_000, None, 1_100, StepEnd::Ok)],
        vec![],
    );
    unnamed.model = ModelInfo::default();
    let spans = turn_spans(&unnamed);
    assert_eq!(spans[1].name, "chat");
    assert_eq!(attribute(&spans[1], "gen_ai.request.model"), None);
    assert_eq!(attribute(&spans[1], "gen_ai.provider.name"), None);
}

#[test]
fn span_attributes_use_the_gen_ai_semantic_convention_names() {
    let looped = summary(
        "completed",
        "tool-calls",
        vec![
            model(1_000, Some(1_010), 1_050, StepEnd::Ok),
            tool("lookup", 1_050, 1_090, StepEnd::Failed),
        ],
        vec![pending("transfer", 1_150, 1_250)],
    );
    let spans = turn_spans(&looped);
    let expected: [&[(&str, AttrValue)]; 4] = [
        &[
            ("gen_ai.operation.name", s("invoke_agent")),
            ("gen_ai.agent.name", s("demo")),
            ("gen_ai.conversation.id", s("s1")),
            ("gen_ai.provider.name", s("openai")),
            ("gen_ai.request.model", s("gpt-test")),
            ("gen_ai.usage.input_tokens", AttrValue::Int(3)),
            ("gen_ai.usage.output_tokens", AttrValue::Int(5)),
            (
                "gen_ai.response.finish_reasons",
                AttrValue::Strs(vec!["tool-calls".into()]),
            ),
            ("turnkeep.turn.id", s("t1")),
            ("turnkeep.turn.outcome", s("completed")),
        ],
        &[
            ("gen_ai.operation.name", s("chat")),
            ("gen_ai.conversation.id", s("s1")),
            ("gen_ai.provider.name", s("openai")),
            ("gen_ai.request.model", s("gpt-test")),
            ("gen_ai.usage.input_tokens", AttrValue::Int(3)),
            ("gen_ai.usage.output_tokens", AttrValue::Int(5)),
            (
                "gen_ai.response.finish_reasons",
                AttrValue::Strs(vec!["stop".into()]),
            ),
        ],
        &[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.conversation.id", s("s1")),
            ("gen_ai.tool.name", s("lookup")),
            ("gen_ai.tool.call.id", s("call-lookup")),
            ("gen_ai.tool.type", s("function")),
            ("error.type", s("tool_error")),
        ],
        &[
            ("gen_ai.conversation.id", s("s1")),
            ("gen_ai.tool.name", s("transfer")),
            ("gen_ai.tool.call.id", s("call-transfer")),
            ("turnkeep.approval.decision", s("pending")),
        ],
    ];
    for (span, want) in spans.iter().zip(expected) {
        let want: Vec<(&str, AttrValue)> = want.to_vec();
        assert_eq!(span.attributes, want, "{}", span.name);
    }
}

// ---- Whole turns: what the driver recorded.

fn submit(session: &Session, turn_id: &str, input: &str) -> TurnEnd {
    let ports = session.ports(true, 10);
    let chat = chat_setup(SESSION);
    let sub = submission(SESSION, turn_id, input);
    let deadline = Interrupt::new();
    block_on(&session.world, async {
        let claim = admit(&ports, &chat, &sub, &LIMITS, &deadline)
            .await
            .expect("claimed");
        let opened = open(&ports, &chat, &sub, &claim, &LIMITS, &deadline)
            .await
            .expect("opened");
        run(
            Turn::new(ports.clone(), LIMITS, sub.clone(), claim, opened),
            Rc::new(Sink::default()),
        )
        .await
    })
}

fn approve(session: &Session, token: &str) -> TurnEnd {
    let ports = session.ports(true, 10);
    let chat = chat_setup(SESSION);
    let request = ResolveRequest {
        session_id: SESSION.into(),
        token: token.into(),
        approve: true,
        reason: None,
    };
    block_on(&session.world, async {
        match resolve(&ports, &chat, &request, &LIMITS, &Interrupt::new()).await {
            Ok(Resolution::Continue(turn)) => run(turn, Rc::new(Sink::default())).await,
            _ => panic!("the approval did not continue the turn"),
        }
    })
}

fn last_summary(session: &Session) -> TurnSummary {
    session.faults.1.borrow().last().expect("a summary").clone()
}

/// The last turn's spans as `(name, error.type)`, each under the turn's, in time.
fn check_turn(
    session: &Session,
    expected: &[(&str, Option<&str>)],
    model_calls: u64,
    tool_calls: u64,
) {
    let summary = last_summary(session);
    let spans = turn_spans(&summary);
    let got: Vec<(&str, Option<&str>)> = spans
        .iter()
        .map(|s| (s.name.as_str(), s.error.as_deref()))
        .collect();
    assert_eq!(got, expected, "{summary:?}");
    for span in &spans[1..] {
        assert_eq!(span.parent, Some(0));
        assert!(
            span.start_ms >= spans[0].start_ms && span.end_ms <= spans[0].end_ms,
            "{span:?}"
        );
        assert!(span.start_ms <= span.end_ms, "{span:?}");
    }
    let metric = |name: &str| {
        turn_metrics(&summary)
            .into_iter()
            .find(|m| m["name"] == name)
            .and_then(|m| m["value"].as_u64())
    };
    assert_eq!(metric("model.calls"), Some(model_calls), "{summary:?}");
    assert_eq!(metric("tool.calls"), Some(tool_calls), "{summary:?}");
    assert!(
        metric("turn.duration_ms") > Some(0),
        "the world's clock moved: {summary:?}"
    );
}

#[test]
fn whole_turns_are_traced_from_what_the_driver_recorded() {
    let session = Session::new(&World::new());
    submit(&session, "t-hello", "hello there");
    check_turn(
        &session,
        &[("invoke_agent demo", None), ("chat demo", None)],
        1,
        0,
    );
    let summary = last_summary(&session);
    assert_eq!(
        summary.model,
        ModelInfo {
            provider: Some("turnkeep".into()),
            model: Some("demo".into())
        }
    );
    let Step::Model(call) = &summary.steps[0] else {
        panic!("{summary:?}")
    };
    assert_eq!(
        (call.finish, call.usage),
        (Some(FinishReason::Stop), Some(Usage::new(2, 3)))
    );
    assert!(
        call.first_chunk_ms.is_some_and(|at| at > call.started_ms),
        "the first word waits 10 ms: {call:?}"
    );

    submit(&session, "t-tool", "/tool cats");
    check_turn(
        &session,
        &[
            ("invoke_agent demo", None),
            ("chat demo", None),
            ("execute_tool lookup", None),
            ("chat demo", None),
        ],
        2,
        1,
    );

    submit(&session, "t-fail", "/fail");
    check_turn(
        &session,
        &[
            ("invoke_agent demo", Some("error")),
            ("chat demo", Some("model_error")),
        ],
        1,
        0,
    );

    submit(&session, "t-ask", "/confirm 5");
    check_turn(
        &session,
        &[
            ("invoke_agent demo", None),
            ("chat demo", None),
            ("approval transfer", None),
        ],
        1,
        0,
    );
    let asked = last_summary(&session);
    assert_eq!(asked.approvals.len(), 1);
    assert_eq!(asked.approvals[0].decision, "pending");
    assert_eq!(asked.approvals[0].ended_ms, asked.ended_ms);

    let envelope = turnkeep::core::session::decode_session_snapshot(
        &block_on(
            &session.world,
            turnkeep::ports::session::SessionStorage::load(
                session.storage.as_ref(),
                SESSION,
                &turnkeep::ports::CancelToken::new(),
            ),
        )
        .unwrap()
        .unwrap(),
    )
    .unwrap();
    approve(&session, &envelope.confirmations[0].token);
    check_turn(
        &session,
        &[
            ("invoke_agent demo", None),
            ("execute_tool transfer", None),
            ("chat demo", None),
            ("approval transfer", None),
        ],
        1,
        1,
    );
    let approved = last_summary(&session);
    assert_eq!(approved.approvals[0].decision, "approved");
    assert_eq!(
        approved.approvals[0].call_id, asked.approvals[0].call_id,
        "the same call"
    );
    assert_eq!(session.faults.1.borrow().len(), 5, "one summary per turn");
}
