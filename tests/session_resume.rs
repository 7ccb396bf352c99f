//! Resume rules (AgentsKit's, for a stored session): missing → new session; every incompatibility is a
//! distinct typed error.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use std::collections::BTreeMap;

use serde_json::{json, Value};
use turnkeep::core::session::{
    resume_session, ChartRoute, ConversationChart, ResumeError, SessionIdentity,
};

const NOW_MS: u64 = 1_783_738_800_000; // 2026-07-11T03:00:00.000Z

fn fixture_value(name: &str) -> Value {
    let text = match name {
        "v1_full.json" => include_str!("fixtures/session/v1_full.json"),
        "v0_full.json" => include_str!("fixtures/session/v0_full.json"),
        other => panic!("no fixture {other}"),
    };
    serde_json::from_str(text).expect("fixture is JSON")
}

/// The statechart `v1_full.json`'s conversation was written by: `start --refund_requested-->
/// collect_details --done--> start`, routes `refund` (in `start` only) and `finish`.
fn chart() -> ConversationChart {
    let on = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(e, t)| (e.to_string(), t.to_string()))
            .collect()
    };
    ConversationChart {
        initial: "start".into(),
        states: BTreeMap::from([
            (
                "start".into(),
                on(&[("refund_requested", "collect_details")]),
            ),
            ("collect_details".into(), on(&[("done", "start")])),
        ]),
        routes: vec![
            ChartRoute {
                id: "refund".into(),
                event: "refund_requested".into(),
                states: Some(vec!["start".into()]),
            },
            ChartRoute {
                id: "finish".into(),
                event: "done".into(),
                states: None,
            },
        ],
    }
}

/// The identity that matches `v1_full.json`.
fn identity() -> SessionIdentity {
    SessionIdentity {
        session_id: "sess-42".into(),
        definition_id: "support:bot".into(),
        definition_revision: 3,
        conversation: Some(chart()),
    }
}

fn with_chart(edit: impl Fn(&mut ConversationChart)) -> SessionIdentity {
    let mut chart = chart();
    edit(&mut chart);
    SessionIdentity {
        conversation: Some(chart),
        ..identity()
    }
}

/// What a resume should give: a session with this expected cursor, or an error of this kind.
#[derive(Debug)]
enum Expect {
    Resumed {
        expected_cursor: Option<u64>,
        cursor: u64,
    },
    Error(&'static str),
}

fn check(label: &str, stored: Option<&Value>, id: &SessionIdentity, expected: Expect) {
    let got = resume_session(stored, id, NOW_MS);
    match (&got, &expected) {
        (
            Ok(r),
            Expect::Resumed {
                expected_cursor,
                cursor,
            },
        ) => {
            assert_eq!(r.expected_cursor, *expected_cursor, "{label}");
            assert_eq!(r.envelope.cursor, *cursor, "{label}");
            assert_eq!(r.envelope.session_id, id.session_id, "{label}");
        }
        (Err(e), Expect::Error(kind)) => assert_eq!(e.kind(), *kind, "{label}: {e}"),
        _ => panic!("{label}: got {got:?}, expected {expected:?}"),
    }
}

#[test]
fn resume_cases() {
    let full = fixture_value("v1_full.json");
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut v = full.clone();
        edit(&mut v);
        v
    };
    let no_conversation = SessionIdentity {
        conversation: None,
        ..identity()
    };
    let decision =
        |edit: &dyn Fn(&mut Value)| with(&|v| edit(&mut v["conversation"]["decisions"][0]));
    let cases: Vec<(&str, Option<Value>, SessionIdentity, Expect)> = vec![
        (
            "absent",
            None,
            identity(),
            Expect::Resumed {
                expected_cursor: None,
                cursor: 0,
            },
        ),
        (
            "null is absent",
            Some(Value::Null),
            identity(),
            Expect::Resumed {
                expected_cursor: None,
                cursor: 0,
            },
        ),
        (
            "stored v1",
            Some(full.clone()),
            identity(),
            Expect::Resumed {
                expected_cursor: Some(17),
                cursor: 17,
            },
        ),
        (
            "stored v0",
            Some(fixture_value("v0_full.json")),
            identity(),
            Expect::Resumed {
                expected_cursor: Some(17),
                cursor: 17,
            },
        ),
        (
            "stored as JSON text",
            Some(Value::String(full.to_string())),
            identity(),
            Expect::Resumed {
                expected_cursor: Some(17),
                cursor: 17,
            },
        ),
        (
            "corrupt text",
            Some(json!("{")),
            identity(),
            Expect::Error("SESSION_INVALID_SNAPSHOT"),
        ),
        (
            "corrupt field",
            Some(with(&|v| v["cursor"] = json!(-1))),
            identity(),
            Expect::Error("SESSION_INVALID_SNAPSHOT"),
        ),
        (
            "unsupported version",
            Some(with(&|v| v["version"] = json!(2))),
            identity(),
            Expect::Error("SESSION_UNSUPPORTED_VERSION"),
        ),
        (
            "foreign session",
            Some(with(&|v| v["sessionId"] = json!("other"))),
            identity(),
            Expect::Error("SESSION_FOREIGN"),
        ),
        (
            "other definition",
            Some(with(&|v| v["definitionId"] = json!("other"))),
            identity(),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "other revision",
            Some(with(&|v| v["definitionRevision"] = json!(4))),
            identity(),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "stored conversation, definition has none",
            Some(full.clone()),
            no_conversation.clone(),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "definition has a conversation, none stored: it starts at the initial state",
            Some(with(&|v| {
                drop(v.as_object_mut().map(|o| o.remove("conversation")))
            })),
            identity(),
            Expect::Resumed {
                expected_cursor: Some(17),
                cursor: 17,
            },
        ),
        (
            "two decisions that replay",
            Some(with(&|v| {
                let back = json!({
                    "messageId": "msg-2", "input": "that is all", "routeId": "finish",
                    "kind": "repaired", "content": "Done.", "fromState": "collect_details",
                    "toState": "start",
                });
                v["conversation"]["decisions"]
                    .as_array_mut()
                    .unwrap()
                    .push(back);
                v["conversation"]["state"] = json!("start");
            })),
            identity(),
            Expect::Resumed {
                expected_cursor: Some(17),
                cursor: 17,
            },
        ),
        (
            "a decision names a route the chart lacks",
            Some(decision(&|d| d["routeId"] = json!("escalate"))),
            identity(),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "a decision starts elsewhere than the chart is",
            Some(decision(&|d| d["fromState"] = json!("collect_details"))),
            identity(),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "a decision ends elsewhere than its event leads",
            Some(with(&|v| {
                v["conversation"]["decisions"][0]["toState"] = json!("start");
                v["conversation"]["state"] = json!("start");
            })),
            identity(),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "the stored state is not where the decisions end",
            Some(with(&|v| v["conversation"]["state"] = json!("start"))),
            identity(),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "the route may not fire in that state",
            Some(full.clone()),
            with_chart(|c| c.routes[0].states = Some(vec!["collect_details".into()])),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "the state has no transition on the route's event",
            Some(full.clone()),
            with_chart(|c| {
                c.states.get_mut("start").unwrap().clear();
            }),
            Expect::Error("SESSION_INCOMPATIBLE_DEFINITION"),
        ),
        (
            "neither has a conversation",
            Some(with(&|v| {
                drop(v.as_object_mut().map(|o| o.remove("conversation")))
            })),
            no_conversation,
            Expect::Resumed {
                expected_cursor: Some(17),
                cursor: 17,
            },
        ),
        (
            "identity not SafeId",
            None,
            SessionIdentity {
                session_id: "a b".into(),
                ..identity()
            },
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
        (
            "identity revision 0",
            None,
            SessionIdentity {
                definition_revision: 0,
                ..identity()
            },
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
        (
            "chart: initial state is not a state",
            None,
            with_chart(|c| c.initial = "nowhere".into()),
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
        (
            "chart: empty state name",
            None,
            with_chart(|c| {
                c.states.insert(String::new(), BTreeMap::new());
            }),
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
        (
            "chart: a transition to an unknown state",
            None,
            with_chart(|c| {
                c.states
                    .get_mut("start")
                    .unwrap()
                    .insert("jump".into(), "moon".into());
            }),
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
        (
            "chart: a route id used twice",
            None,
            with_chart(|c| c.routes[1].id = "refund".into()),
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
        (
            "chart: a route id that is not a SafeId",
            None,
            with_chart(|c| c.routes[1].id = "no way".into()),
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
        (
            "chart: a route in an unknown state",
            None,
            with_chart(|c| c.routes[1].states = Some(vec!["limbo".into()])),
            Expect::Error("SESSION_INVALID_IDENTITY"),
        ),
    ];
    for (label, stored, id, expected) in cases {
        check(label, stored.as_ref(), &id, expected);
    }
}

#[test]
fn a_new_session_is_a_valid_envelope_with_the_initial_conversation() {
    let r = resume_session(None, &identity(), NOW_MS).expect("new");
    let env = &r.envelope;
    assert_eq!(env.updated_at, "2026-07-11T03:00:00.000Z");
    assert_eq!(env.definition_revision, 3);
    assert_eq!(
        env.conversation.as_ref().map(|c| c.state.as_str()),
        Some("start")
    );
    assert!(
        env.active_turn.is_none() && env.terminal_turns.is_empty() && env.confirmations.is_empty()
    );
    // What resume creates must itself resume (it is what the first save stores).
    let again = resume_session(Some(&env.to_value()), &identity(), NOW_MS).expect("resume own");
    assert_eq!(&again.envelope, env);
    assert_eq!(again.expected_cursor, Some(0));
}

#[test]
fn decode_errors_keep_their_detail() {
    let stored = json!({"version": 9});
    match resume_session(Some(&stored), &identity(), NOW_MS) {
        Err(ResumeError::UnsupportedVersion(e)) => assert!(e.detail.contains("version 9")),
        other => panic!("got {other:?}"),
    }
}

#[test]
fn a_stored_session_without_conversation_starts_the_definitions_chart() {
    let mut stored = fixture_value("v1_full.json");
    stored.as_object_mut().unwrap().remove("conversation");
    let r = resume_session(Some(&stored), &identity(), NOW_MS).expect("resumes");
    let conversation = r.envelope.conversation.expect("started");
    assert_eq!(conversation.state, "start");
    assert!(conversation.decisions.is_empty());
    assert_eq!(r.expected_cursor, Some(17), "saved with the next write");
}

#[test]
fn an_incompatible_conversation_says_which_decision() {
    let mut stored = fixture_value("v1_full.json");
    stored["conversation"]["decisions"][0]["routeId"] = json!("escalate");
    let err = resume_session(Some(&stored), &identity(), NOW_MS).expect_err("refused");
    assert!(
        matches!(&err, ResumeError::IncompatibleDefinition { detail }
            if detail.contains("decisions[0]") && detail.contains("escalate")),
        "{err}"
    );
}
