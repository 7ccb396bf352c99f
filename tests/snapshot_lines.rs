//! The sender's incremental snapshot lines ([`LineEncoder`]: unchanged messages' bytes reused,
//! only the changed tail encoded again) are byte for byte what the reference encoder
//! ([`encode_turn_event_line`] over a freshly built [`snapshot_payload`]) writes, over many
//! turns of one conversation, whatever the model and tools do and whenever a reader takes a line.
//! And the reuse is real: on a streaming turn only the growing message is encoded again.
//! Host only: proptest is a host dev-dependency.
#![cfg(not(target_arch = "wasm32"))]

mod chat_support;

use std::cell::Cell;

use chat_support::{counter_ids, NOW_MS};
use proptest::prelude::*;
use serde_json::{json, Map};
use turnkeep::core::chat::{
    Action, ChatConfig, ChatController, FinishReason, ModelChunk, ToolSpec, Usage,
};
use turnkeep::core::coalesce::Urgency;
use turnkeep::core::protocol::{encode_turn_event_line, Envelope, EventBody, Message, TurnEvent};
use turnkeep::core::sequence::TurnSequencer;
use turnkeep::core::session::{Confirmation, ConfirmationStatus};
use turnkeep::ports::chat::{Clock, Ids};
use turnkeep::turn::snapshot::snapshot_payload;
use turnkeep::turn::{Line, LineEncoder};

const SESSION: &str = "s-1";

/// A clock that moves a little on every reading, so `emittedAt` changes between lines.
struct Ticking(Cell<u64>);

impl Clock for Ticking {
    fn now_ms(&self) -> u64 {
        let now = self.0.get();
        self.0.set(now + 7);
        now
    }
}

/// Event ids `evt-1`, `evt-2`, ... (the same sequence for the encoder and the reference).
struct Counting(Cell<u32>);

impl Ids for Counting {
    fn next_id(&self, prefix: &str) -> String {
        self.0.set(self.0.get() + 1);
        format!("{prefix}-{}", self.0.get())
    }
}

#[derive(Clone, Debug)]
enum Input {
    Chunk(ModelChunk),
    ModelEnd,
    ModelError,
    ToolStarted(usize),
    ToolResult(usize, bool),
    Stop,
}

fn pick<T: Clone + std::fmt::Debug + 'static>(items: &'static [T]) -> impl Strategy<Value = T> {
    proptest::sample::select(items)
}

fn input() -> impl Strategy<Value = Input> {
    let text = pick(&["", "a", " word", "é漢", "\n", "\"q\"", "\\", "\u{1}"])
        .prop_map(|t| Input::Chunk(ModelChunk::Text(t.into())));
    let call = (
        0u32..3,
        proptest::option::of(pick(&["a", "b"])),
        proptest::option::of(pick(&["lookup", "transfer"])),
        pick(&["", "{", "}", "\"q\":", "\"x\"", "{}"]),
    )
        .prop_map(|(index, id, name, args)| {
            Input::Chunk(ModelChunk::ToolCall {
                index,
                id: id.map(Into::into),
                name: name.map(Into::into),
                args_delta: args.into(),
            })
        });
    let finish = (
        pick(&[
            FinishReason::Stop,
            FinishReason::ToolCalls,
            FinishReason::Length,
        ]),
        proptest::option::of((0u64..4, 0u64..4)),
    )
        .prop_map(|(reason, usage)| {
            // Usage alone may change between two lines (the encoder keeps the line's tail).
            Input::Chunk(ModelChunk::Finish {
                reason,
                usage: usage.map(|(p, c)| Usage::new(p, c)),
            })
        });
    prop_oneof![
        10 => text,
        3 => call,
        1 => finish,
        3 => Just(Input::ModelEnd),
        1 => Just(Input::ModelError),
        2 => (0usize..4).prop_map(Input::ToolStarted),
        3 => ((0usize..4), any::<bool>()).prop_map(|(i, ok)| Input::ToolResult(i, ok)),
        1 => Just(Input::Stop),
    ]
}

/// One turn: its inputs, and after each one whether a reader takes a line then.
fn turn() -> impl Strategy<Value = (Vec<(Input, bool)>, usize)> {
    (
        proptest::collection::vec((input(), any::<bool>()), 0..40),
        0usize..3,
    )
}

fn tools() -> Vec<ToolSpec> {
    ["lookup", "transfer"]
        .iter()
        .map(|name| ToolSpec {
            name: (*name).into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            requires_confirmation: *name == "transfer",
            host_validates: false,
        })
        .collect()
}

fn confirmations(count: usize) -> Vec<Confirmation> {
    (0..count)
        .map(|i| Confirmation {
            token: format!("confirm-{i}"),
            action: "transfer".into(),
            input: Map::from_iter([("amount".to_owned(), json!(i))]),
            tool_call_id: format!("app-{i}"),
            expires_at: NOW_MS + 60_000,
            status: ConfirmationStatus::Pending,
        })
        .collect()
}

/// The reference line: the whole payload built and encoded from scratch.
fn reference(
    sequencer: &mut TurnSequencer,
    is_last: bool,
    turn_id: &str,
    controller: &ChatController,
    confirmations: &[Confirmation],
    clock: &Ticking,
    ids: &Counting,
) -> Option<String> {
    let sequence = if is_last {
        Some(sequencer.next_final())
    } else {
        sequencer.next_intermediate()
    }?;
    let event = TurnEvent {
        envelope: Envelope {
            event_id: ids.event_id(),
            session_id: SESSION.into(),
            turn_id: turn_id.into(),
            sequence,
            emitted_at: turnkeep::core::checks::format_iso_millis_at(clock.now_ms()),
        },
        body: EventBody::Snapshot(snapshot_payload(controller.state(), confirmations)),
    };
    Some(encode_turn_event_line(&event))
}

/// Both encoders on their own (identical) clocks and id sources, compared line by line.
struct Pair {
    encoder: LineEncoder,
    sequencer: TurnSequencer,
    turn_id: String,
    clocks: (Ticking, Ticking),
    ids: (Counting, Counting),
    /// The messages the last line showed.
    shown: Option<Vec<Message>>,
}

impl Pair {
    fn new(turn: usize) -> Self {
        let claim_cursor = turn as u64 + 1;
        let turn_id = format!("t-{turn}");
        Self {
            encoder: LineEncoder::new(SESSION, &turn_id, claim_cursor).expect("small cursor"),
            sequencer: TurnSequencer::new(claim_cursor).expect("small cursor"),
            turn_id,
            clocks: (Ticking(Cell::new(NOW_MS)), Ticking(Cell::new(NOW_MS))),
            ids: (Counting(Cell::new(0)), Counting(Cell::new(0))),
            shown: None,
        }
    }

    fn check(
        &mut self,
        is_last: bool,
        c: &ChatController,
        confirmations: &[Confirmation],
    ) -> Result<(), TestCaseError> {
        // Paced only what is paceable: never a change a reader must see within a frame.
        if self.encoder.urgency(c) == Urgency::Paced {
            let messages = &c.state().messages;
            prop_assert!(
                only_more_text(self.shown.as_deref(), messages),
                "paced: {:?} -> {:?}",
                self.shown,
                messages
            );
        }
        self.shown = Some(c.state().messages.clone());
        let line = self
            .encoder
            .encode(
                Line::State,
                is_last,
                c,
                confirmations,
                &self.clocks.0,
                &self.ids.0,
            )
            .map(|bytes| String::from_utf8(bytes.to_vec()).expect("utf-8"));
        let expected = reference(
            &mut self.sequencer,
            is_last,
            &self.turn_id,
            c,
            confirmations,
            &self.clocks.1,
            &self.ids.1,
        );
        prop_assert_eq!(line, expected);
        Ok(())
    }
}

/// The reference of `Urgency::Paced`: the messages are those the last line showed, or the last
/// one's content grew from text it had then, and nothing else changed.
fn only_more_text(shown: Option<&[Message]>, now: &[Message]) -> bool {
    let Some(shown) = shown else {
        return false;
    };
    if shown == now {
        return true;
    }
    let (Some((was, before)), Some((is, same))) = (shown.split_last(), now.split_last()) else {
        return false;
    };
    let mut grown = was.clone();
    grown.content = is.content.clone();
    before == same
        && !was.content.is_empty()
        && is.content.starts_with(&was.content)
        && &grown == is
}

fn apply(
    c: &mut ChatController,
    input: Input,
    tool_ids: &mut Vec<String>,
    ids: &mut impl FnMut(&str) -> String,
) {
    let action = match input {
        Input::Chunk(chunk) => c.on_chunk(chunk),
        Input::ModelEnd => c.on_model_end(NOW_MS, ids),
        Input::ModelError => c.on_model_error(),
        Input::ToolStarted(i) => c.on_tool_started(&tool_ids[i % tool_ids.len()].clone()),
        Input::ToolResult(i, ok) => {
            let id = tool_ids[i % tool_ids.len()].clone();
            let outcome = if ok {
                Ok("r".to_owned())
            } else {
                Err("e".to_owned())
            };
            c.on_tool_result(&id, outcome, NOW_MS, ids)
        }
        Input::Stop => c.stop(),
    };
    if let Action::RunTools(invocations) = &action {
        tool_ids.extend(invocations.iter().map(|i| i.id.clone()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn incremental_lines_equal_the_reference_encoder_over_many_turns(
        turns in proptest::collection::vec(turn(), 1..6),
    ) {
        let mut ids = counter_ids();
        let mut history = Vec::new();
        for (number, (inputs, shown)) in turns.into_iter().enumerate() {
            let config = ChatConfig { tools: tools(), max_tool_iterations: 2, ..Default::default() };
            let mut c = ChatController::new(config, history);
            let shown = confirmations(shown);
            let mut pair = Pair::new(number);
            let mut tool_ids: Vec<String> = vec!["a".into(), "b".into()];
            c.send("go \"quoted\"", NOW_MS, &mut ids).expect("send");
            pair.check(false, &c, &shown)?;
            for (input, take) in inputs {
                apply(&mut c, input, &mut tool_ids, &mut ids);
                if take {
                    pair.check(false, &c, &shown)?;
                }
            }
            c.stop();
            pair.check(true, &c, &shown)?;
            history = c.state().messages.clone();
        }
    }
}

#[test]
fn a_streaming_turn_encodes_only_the_growing_message() {
    let mut ids = counter_ids();
    let history: Vec<_> = {
        let mut c = ChatController::new(
            ChatConfig {
                tools: Vec::new(),
                max_tool_iterations: 0,
                ..Default::default()
            },
            Vec::new(),
        );
        c.send("earlier", NOW_MS, &mut ids).expect("send");
        c.on_chunk(ModelChunk::Text("reply".into()));
        c.on_model_end(NOW_MS, &mut ids);
        c.state().messages.clone()
    };
    let mut c = ChatController::new(
        ChatConfig {
            tools: Vec::new(),
            max_tool_iterations: 0,
            ..Default::default()
        },
        history,
    );
    let mut pair = Pair::new(1);
    c.send("now", NOW_MS, &mut ids).expect("send");
    pair.check(false, &c, &[]).expect("same line");
    let first = pair.encoder.counts();
    // Two earlier messages, the new user message and the (empty) assistant message it started:
    // all encoded once.
    assert_eq!((first.messages_encoded, first.messages_reused), (4, 0));
    for i in 0..200 {
        c.on_chunk(ModelChunk::Text(format!(" w{i}")));
        pair.check(false, &c, &[]).expect("same line");
    }
    let streamed = pair.encoder.counts();
    // And each of those lines but the first text was paced (more text of a shown answer).
    c.on_chunk(ModelChunk::Text(" more".into()));
    assert_eq!(pair.encoder.urgency(&c), Urgency::Paced);
    c.on_model_end(NOW_MS, &mut ids);
    assert_eq!(
        pair.encoder.urgency(&c),
        Urgency::Prompt,
        "the answer complete"
    );
    // Per line while streaming: the growing assistant message encoded, the three before it reused.
    assert_eq!(streamed.lines, 201);
    assert_eq!(streamed.messages_encoded - first.messages_encoded, 200);
    assert_eq!(streamed.messages_reused - first.messages_reused, 600);
}

#[test]
fn an_answers_first_text_is_prompt_and_its_growth_paced() {
    let mut ids = counter_ids();
    let config = ChatConfig {
        tools: Vec::new(),
        max_tool_iterations: 0,
        ..Default::default()
    };
    let mut c = ChatController::new(config, Vec::new());
    let mut pair = Pair::new(1);
    c.send("hi", NOW_MS, &mut ids).expect("send");
    assert_eq!(pair.encoder.urgency(&c), Urgency::Prompt, "no line yet");
    pair.check(false, &c, &[]).expect("same line");
    assert_eq!(pair.encoder.urgency(&c), Urgency::Paced, "nothing changed");
    c.on_chunk(ModelChunk::Text("a".into()));
    assert_eq!(pair.encoder.urgency(&c), Urgency::Prompt, "the first text");
    pair.check(false, &c, &[]).expect("same line");
    c.on_chunk(ModelChunk::Text(" b".into()));
    c.on_chunk(ModelChunk::Text(" c".into()));
    assert_eq!(pair.encoder.urgency(&c), Urgency::Paced, "more text");
    c.on_chunk(ModelChunk::Finish {
        reason: FinishReason::Stop,
        usage: Some(Usage::new(1, 2)),
    });
    assert_eq!(pair.encoder.urgency(&c), Urgency::Paced, "and the usage");
    c.on_model_end(NOW_MS, &mut ids);
    assert_eq!(pair.encoder.urgency(&c), Urgency::Prompt, "a status");
}
