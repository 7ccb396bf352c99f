//! Properties of the one projection (`core::projection`), for random chunk logs — logs turnkeep's
//! encoder writes from random controller-like states, and random TanStack-dialect logs — at every
//! cut point:
//! - a reader that projected the prefix and then feeds the suffix ends where a reader of the
//!   whole log ends (the seed → live law), whatever it read of the state at the cut;
//! - the same for a reader that starts from the seed *as a page receives it*: a new projection
//!   from the seed's `messages` (`new ChatProjection(seed.messages, { activeRunId,
//!   confirmations })`), fed the suffix, shows what the whole log shows (messages, render parts,
//!   confirmations, the running turn), and a tool card materialised at seed time is unchanged by
//!   the first live chunk unless that chunk is about its call (`check_seed_law`);
//! - a tool card keeps its shape (message id, call id, name) across the cut, and its status only
//!   moves forward;
//! - no message id appears twice (canonical and native);
//! - opaque native parts and metadata of a `MESSAGES_SNAPSHOT` survive into `native_messages`.
//!
//! Plus golden fixtures: `tests/fixtures/projection/*.json`, each a log with its expected
//! projection (`UPDATE_GOLDEN=1` rewrites the expectations; review the diff).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use turnkeep::core::chat::controller::{ChatState, ChatStatus};
use turnkeep::core::chat::model::Usage;
use turnkeep::core::projection::{render_parts, Projection, RenderPart, TurnEncoder};
use turnkeep::core::protocol::{
    messages_to_value, Message, MessageStatus, Role, ToolCall, ToolCallStatus,
};

// ---- the properties, over any log

/// What a page shows of a projection: the canonical messages, the render parts, the tool
/// confirmations and the running turn.
fn shown(p: &Projection) -> (Vec<Message>, Vec<RenderPart>, Value, Option<String>) {
    let messages = p.to_messages();
    let parts = render_parts(&messages);
    let confirmations = serde_json::to_value(p.confirmations()).unwrap();
    (
        messages,
        parts,
        confirmations,
        p.active_run().map(str::to_owned),
    )
}

/// The seed → live law as a page runs it: at every cut, the seed a server renders from the
/// prefix (`resolveChatSnapshot`: `messages`, `activeRunId`, `confirmations`, `inFlight`),
/// crossed through JSON as the page receives it, then a new projection from it (`new
/// ChatProjection(seed)`) fed the suffix shows what the whole log shows (and from `messages`
/// alone, where nothing was in flight at the cut); and the first
/// live chunk leaves every tool card the seed materialised as it was, unless it names the card's
/// call, in which case seed and live agree on the card.
fn check_seed_law(chunks: &[Value]) -> Result<(), TestCaseError> {
    let mut whole = Projection::new();
    whole.feed_all(chunks);
    let expected = shown(&whole);
    let mut prefix = Projection::new();
    for cut in 0..=chunks.len() {
        let wire = |v: Value| serde_json::from_str::<Value>(&v.to_string()).unwrap();
        let messages = wire(messages_to_value(&prefix.to_messages()));
        let confirmations = wire(serde_json::to_value(prefix.confirmations()).unwrap());
        let in_flight = wire(prefix.in_flight());
        let seeded = Projection::from_initial(&messages, prefix.active_run())
            .with_confirmations(&confirmations)
            .with_in_flight(&in_flight);
        if prefix.is_settled() {
            // Between messages, the seed's messages alone say it all (`new ChatProjection(seed.messages, { activeRunId, confirmations })`).
            let mut bare = Projection::from_initial(&messages, prefix.active_run())
                .with_confirmations(&confirmations);
            bare.feed_all(&chunks[cut..]);
            prop_assert_eq!(
                &shown(&bare),
                &expected,
                "seeded from messages alone at settled cut {} differs from the whole log",
                cut
            );
        }
        let at_seed = render_parts(&seeded.to_messages());
        prop_assert_eq!(
            &at_seed,
            &render_parts(&prefix.to_messages()),
            "the seed at cut {} draws what the prefix does",
            cut
        );
        let mut live = seeded.clone();
        if let Some(first) = chunks.get(cut) {
            live.feed(first);
            let mut continuous = prefix.clone();
            continuous.feed(first);
            // The calls the chunk is about (a native batch restates every one).
            let names = |call: &str| {
                first["type"] == "MESSAGES_SNAPSHOT"
                    || first.get("toolCallId").and_then(Value::as_str) == Some(call)
                    || first.pointer("/value/toolCallId").and_then(Value::as_str) == Some(call)
            };
            let after = render_parts(&live.to_messages());
            let continuous_after = render_parts(&continuous.to_messages());
            for card in at_seed
                .iter()
                .filter(|p| matches!(p, RenderPart::ToolCard { .. }))
            {
                let RenderPart::ToolCard { tool_call_id, .. } = card else {
                    unreachable!()
                };
                let find = |parts: &[RenderPart]| {
                    parts.iter().find(|p| matches!(p, RenderPart::ToolCard { tool_call_id: id, .. } if id == tool_call_id)).cloned()
                };
                prop_assert_eq!(
                    find(&after),
                    find(&continuous_after),
                    "seed and live disagree on card {} after chunk {} (cut {})",
                    tool_call_id,
                    first,
                    cut
                );
                if !names(tool_call_id) {
                    prop_assert_eq!(
                        find(&after),
                        Some(card.clone()),
                        "card {} changed by the first live chunk {} (cut {})",
                        tool_call_id,
                        first,
                        cut
                    );
                }
            }
            live.feed_all(&chunks[cut + 1..]);
        }
        prop_assert_eq!(
            &shown(&live),
            &expected,
            "seeded at cut {} then fed the suffix differs from the whole log",
            cut
        );
        if cut < chunks.len() {
            prefix.feed(&chunks[cut]);
        }
    }
    Ok(())
}

/// Checks every property at every cut of `chunks`.
fn check_log(chunks: &[Value]) -> Result<(), TestCaseError> {
    check_seed_law(chunks)?;
    let mut whole = Projection::new();
    whole.feed_all(chunks);
    let mut live = Projection::new();
    let mut cards: HashMap<String, (String, String, ToolCallStatus)> = HashMap::new();
    for cut in 0..=chunks.len() {
        // What a server-side render reads at the cut; reading must not change the projection.
        let seen = (live.to_messages(), live.native_messages());
        let mut continued = live.clone();
        continued.feed_all(&chunks[cut..]);
        prop_assert_eq!(
            &continued,
            &whole,
            "prefix {} then suffix differs from the whole log",
            cut
        );
        prop_assert_eq!(&seen.0, &live.to_messages());

        let ids: Vec<&str> = seen.0.iter().map(|m| m.id.as_str()).collect();
        prop_assert_eq!(
            ids.iter().collect::<HashSet<_>>().len(),
            ids.len(),
            "a message id twice: {:?}",
            ids
        );
        let native_ids: Vec<&str> = seen.1.iter().filter_map(|m| m["id"].as_str()).collect();
        prop_assert_eq!(
            native_ids.iter().collect::<HashSet<_>>().len(),
            native_ids.len(),
            "a native message id twice: {:?}",
            native_ids
        );

        for part in render_parts(&seen.0) {
            if let RenderPart::ToolCard {
                message_id,
                tool_call_id,
                name,
                status,
                ..
            } = part
            {
                let status = parse_status(status);
                if let Some((was_message, was_name, was_status)) = cards.get(&tool_call_id) {
                    prop_assert_eq!(
                        was_message,
                        &message_id,
                        "card {} moved to another message",
                        tool_call_id
                    );
                    prop_assert_eq!(was_name, &name, "card {} was renamed", tool_call_id);
                    prop_assert!(
                        forward(*was_status, status),
                        "card {} went from {:?} to {:?} at cut {}",
                        tool_call_id,
                        was_status,
                        status,
                        cut
                    );
                }
                cards.insert(tool_call_id, (message_id, name, status));
            }
        }
        if cut < chunks.len() {
            live.feed(&chunks[cut]);
        }
    }
    Ok(())
}

/// Reasoning spans as AG-UI's verifier wants them: content only inside an open span, no span
/// opened twice, each closed (`REASONING_MESSAGE_END`, `REASONING_END`) before its message's
/// text, tool calls or end, and before the run ends; each under its assistant message.
fn check_reasoning_spans(chunks: &[Value]) -> Result<(), TestCaseError> {
    let mut open: HashMap<String, String> = HashMap::new(); // span id -> parent message id
    let mut seen: HashSet<String> = HashSet::new();
    let mut started: HashSet<String> = HashSet::new();
    for chunk in chunks {
        let kind = chunk["type"].as_str().unwrap_or_default();
        let id = chunk["messageId"].as_str().unwrap_or_default().to_owned();
        match kind {
            "TEXT_MESSAGE_START" => {
                started.insert(id);
            }
            "REASONING_START" => {
                let parent = chunk["parentMessageId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                prop_assert!(
                    started.contains(&parent),
                    "reasoning before its message started: {}",
                    chunk
                );
                prop_assert!(
                    seen.insert(id.clone()),
                    "a reasoning span opened twice: {}",
                    id
                );
                open.insert(id, parent);
            }
            "REASONING_MESSAGE_START" => {
                prop_assert!(open.contains_key(&id) && chunk["role"] == "reasoning")
            }
            "REASONING_MESSAGE_CONTENT" => {
                prop_assert!(open.contains_key(&id), "reasoning content outside its span")
            }
            "REASONING_MESSAGE_END" => prop_assert!(open.contains_key(&id)),
            "REASONING_END" => prop_assert!(open.remove(&id).is_some()),
            "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_END" => {
                prop_assert!(
                    !open.values().any(|p| *p == id),
                    "text of {} while its reasoning is open",
                    id
                )
            }
            "TOOL_CALL_START" => {
                let parent = chunk["parentMessageId"].as_str().unwrap_or_default();
                prop_assert!(
                    !open.values().any(|p| p == parent),
                    "a tool call while the reasoning is open"
                );
            }
            "RUN_FINISHED" | "RUN_ERROR" => {
                prop_assert!(open.is_empty(), "the run ended with reasoning open")
            }
            _ => {}
        }
    }
    Ok(())
}

fn parse_status(status: &str) -> ToolCallStatus {
    turnkeep::core::projection::chunks::parse_tool_status(status).expect("a known status")
}

/// Pending → (requires confirmation) → running → complete or error; a settled call stays.
fn forward(from: ToolCallStatus, to: ToolCallStatus) -> bool {
    let rank = |s| match s {
        ToolCallStatus::Pending => 0,
        ToolCallStatus::RequiresConfirmation => 1,
        ToolCallStatus::Running => 2,
        ToolCallStatus::Complete | ToolCallStatus::Error => 3,
    };
    rank(to) > rank(from) || from == to
}

// ---- logs from turnkeep's encoder: random controller-like states

#[derive(Clone, Debug)]
enum Step {
    User(&'static str),
    Assistant,
    Text(&'static str),
    /// Reasoning text of the streaming assistant message (`metadata.reasoning`).
    Reasoning(&'static str),
    Call(&'static str),
    /// Move call `n` (counted from the newest) a step on: pending → running → complete/error,
    /// or pending → requires_confirmation.
    Advance(usize, bool),
    /// The result message of call `n`.
    Answer(usize),
    EndMessage,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => proptest::sample::select(&["hi", "what now?", "é漢 \n"][..]).prop_map(Step::User),
        1 => Just(Step::Assistant),
        4 => proptest::sample::select(&["a", " word", "", "\n", "é"][..]).prop_map(Step::Text),
        2 => proptest::sample::select(&["hm", " so", "", "ü"][..]).prop_map(Step::Reasoning),
        2 => proptest::sample::select(&["lookup", "transfer"][..]).prop_map(Step::Call),
        3 => (0usize..3, any::<bool>()).prop_map(|(n, ok)| Step::Advance(n, ok)),
        2 => (0usize..3).prop_map(Step::Answer),
        1 => Just(Step::EndMessage),
    ]
}

fn message(id: usize, role: Role, at: usize) -> Message {
    Message {
        id: format!("m{id}"),
        role,
        content: String::new(),
        status: MessageStatus::Streaming,
        created_at: format!("2026-07-11T03:00:{:02}.{:03}Z", at / 1000 % 60, at % 1000),
        parts: None,
        tool_calls: None,
        tool_call_id: None,
        metadata: None,
    }
}

/// Applies a step to the conversation (steps that make no sense here change nothing).
fn apply(messages: &mut Vec<Message>, step: &Step, counter: &mut usize) {
    *counter += 1;
    let n = *counter;
    let calls: Vec<(usize, usize)> = messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| (0..m.tool_calls.as_ref().map_or(0, Vec::len)).map(move |j| (i, j)))
        .collect();
    let nth_call = |k: usize| calls.len().checked_sub(k + 1).map(|at| calls[at]);
    match step {
        Step::User(text) => {
            let mut m = message(n, Role::User, n);
            m.content = (*text).into();
            m.status = MessageStatus::Complete;
            messages.push(m);
        }
        Step::Assistant => messages.push(message(n, Role::Assistant, n)),
        Step::Text(text) => {
            if let Some(m) = messages
                .last_mut()
                .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming)
            {
                m.content.push_str(text);
            }
        }
        Step::Reasoning(text) => {
            if let Some(m) = messages
                .last_mut()
                .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming)
            {
                if !text.is_empty() {
                    m.append_reasoning(text);
                }
            }
        }
        Step::Call(name) => {
            if let Some(m) = messages
                .last_mut()
                .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming)
            {
                let mut args = Map::new();
                args.insert("n".into(), json!(n));
                m.tool_calls.get_or_insert_with(Vec::new).push(ToolCall {
                    id: format!("call-{n}"),
                    name: (*name).into(),
                    args,
                    status: ToolCallStatus::Pending,
                    result: None,
                    error: None,
                });
            }
        }
        Step::Advance(k, ok) => {
            if let Some((i, j)) = nth_call(*k) {
                let call = &mut messages[i].tool_calls.as_mut().unwrap()[j];
                match (call.status, ok) {
                    (ToolCallStatus::Pending, false) if call.name == "transfer" => {
                        call.status = ToolCallStatus::RequiresConfirmation
                    }
                    (ToolCallStatus::Pending | ToolCallStatus::RequiresConfirmation, _) => {
                        call.status = ToolCallStatus::Running
                    }
                    (ToolCallStatus::Running, true) => {
                        call.status = ToolCallStatus::Complete;
                        call.result = Some(format!("result {n}"));
                    }
                    (ToolCallStatus::Running, false) => {
                        call.status = ToolCallStatus::Error;
                        call.error = Some(format!("failed {n}"));
                    }
                    _ => {}
                }
            }
        }
        Step::Answer(k) => {
            let Some((i, j)) = nth_call(*k) else { return };
            let call = messages[i].tool_calls.as_ref().unwrap()[j].clone();
            let answered = messages
                .iter()
                .any(|m| m.tool_call_id.as_deref() == Some(&call.id));
            if answered
                || !matches!(
                    call.status,
                    ToolCallStatus::Complete | ToolCallStatus::Error
                )
            {
                return;
            }
            let mut m = message(n, Role::Tool, n);
            m.tool_call_id = Some(call.id.clone());
            m.content = call
                .result
                .clone()
                .or(call.error.clone())
                .unwrap_or_default();
            m.status = if call.status == ToolCallStatus::Error {
                MessageStatus::Error
            } else {
                MessageStatus::Complete
            };
            messages.push(m);
        }
        Step::EndMessage => {
            if let Some(m) = messages
                .iter_mut()
                .rev()
                .find(|m| m.status == MessageStatus::Streaming)
            {
                m.status = MessageStatus::Complete;
            }
        }
    }
}

/// The chunks turnkeep publishes for one turn through the given steps, and the final state.
fn encoded_turn(steps: &[Step]) -> (Vec<Value>, Vec<Message>, u64) {
    let mut encoder = TurnEncoder::new();
    let mut chunks = encoder.begin(&[], false, true);
    chunks.extend(encoder.run_started("s1", "t1", 1_000));
    let mut state = ChatState {
        messages: Vec::new(),
        status: ChatStatus::Streaming,
        usage: Usage::default(),
        error: None,
    };
    let mut counter = 0;
    for (i, step) in steps.iter().enumerate() {
        apply(&mut state.messages, step, &mut counter);
        chunks.extend(encoder.diff(&state, 1_000 + i as u64));
    }
    state.status = ChatStatus::Complete;
    chunks.extend(encoder.run_ended(&state, &[], 9_999));
    (chunks, state.messages, encoder.fallbacks())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn turnkeep_logs_project_the_same_at_every_cut(steps in proptest::collection::vec(step(), 0..40)) {
        let (chunks, messages, _) = encoded_turn(&steps);
        check_log(&chunks)?;
        check_reasoning_spans(&chunks)?;
        let mut projection = Projection::new();
        projection.feed_all(&chunks);
        // The run's end closes what is still streaming; otherwise the log says the state.
        // A trailing assistant message with nothing in it yet is not published.
        let mut messages = messages;
        if messages.last().is_some_and(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming && m.content.is_empty() && m.reasoning().is_empty() && m.tool_calls.is_none()) {
            messages.pop();
        }
        let expected: Vec<Message> = messages
            .into_iter()
            .map(|mut m| {
                if m.status == MessageStatus::Streaming {
                    m.status = MessageStatus::Complete;
                }
                m
            })
            .collect();
        prop_assert_eq!(projection.to_messages(), expected);
    }

    #[test]
    fn tanstack_logs_project_the_same_at_every_cut(script in proptest::collection::vec(tanstack_step(), 0..60)) {
        check_log(&tanstack_log(&script))?;
    }

    #[test]
    fn opaque_native_parts_survive(
        extras in proptest::collection::vec(opaque_value(), 1..4),
        script in proptest::collection::vec(tanstack_step(), 0..30),
    ) {
        let batch: Vec<Value> = extras
            .iter()
            .enumerate()
            .map(|(i, extra)| json!({
                "id": format!("native-{i}"),
                "role": if i % 2 == 0 { "user" } else { "assistant" },
                "parts": [
                    { "type": "text", "content": format!("kept {i}") },
                    { "type": "x-future-part", "payload": extra },
                    { "type": "image", "source": { "type": "url", "value": "https://example.test/a.png" } }
                ],
                "metadata": { "opaque": extra },
            }))
            .collect();
        let mut chunks = vec![json!({ "type": "MESSAGES_SNAPSHOT", "messages": batch })];
        // A turn after the batch, which names only its own messages (the user message first, so a
        // tool call without a parent does not land on a batch message: TanStack would put it there).
        let mut turn = vec![TanStackStep::User(0)];
        turn.extend(script);
        chunks.extend(tanstack_log(&turn));
        check_log(&chunks)?;
        let mut projection = Projection::new();
        projection.feed_all(&chunks);
        let native = projection.native_messages();
        for message in &batch {
            prop_assert!(native.contains(message), "lost {}", message);
        }
        let texts: Vec<String> = projection.messages().take(batch.len()).map(|m| m.content.clone()).collect();
        prop_assert_eq!(texts, (0..batch.len()).map(|i| format!("kept {i}")).collect::<Vec<_>>());
    }
}

// ---- random TanStack-dialect logs

#[derive(Clone, Debug)]
enum TanStackStep {
    User(usize),
    Assistant(usize),
    Delta(usize, &'static str),
    EndMessage(usize),
    /// Advance tool call `c` through START → ARGS (twice) → END → RESULT.
    Call(usize, usize, bool),
    Run(bool),
}

fn tanstack_step() -> impl Strategy<Value = TanStackStep> {
    prop_oneof![
        1 => (0usize..3).prop_map(TanStackStep::User),
        1 => (0usize..3).prop_map(TanStackStep::Assistant),
        4 => (0usize..3, proptest::sample::select(&["Hi", " there", "", "é"][..])).prop_map(|(m, t)| TanStackStep::Delta(m, t)),
        1 => (0usize..3).prop_map(TanStackStep::EndMessage),
        4 => (0usize..3, 0usize..3, any::<bool>()).prop_map(|(c, m, ok)| TanStackStep::Call(c, m, ok)),
        1 => any::<bool>().prop_map(TanStackStep::Run),
    ]
}

/// The chunks of a script, each call's chunks in TanStack's order (0.58 dialect, with 0.8's
/// `toolName` and `content` now and then).
fn tanstack_log(script: &[TanStackStep]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut call_stage: HashMap<usize, usize> = HashMap::new();
    for (i, step) in script.iter().enumerate() {
        let ts = 1_783_000_000_000u64 + i as u64;
        match step {
            TanStackStep::User(u) => {
                let id = format!("user-{u}");
                out.push(json!({"type":"TEXT_MESSAGE_START","messageId":id,"role":"user","model":"client","timestamp":ts}));
                out.push(json!({"type":"TEXT_MESSAGE_CONTENT","messageId":id,"delta":"question","model":"client","timestamp":ts}));
                out.push(json!({"type":"TEXT_MESSAGE_END","messageId":id,"model":"client","timestamp":ts}));
            }
            TanStackStep::Assistant(a) => out.push(json!({"type":"TEXT_MESSAGE_START","messageId":format!("asst-{a}"),"role":"assistant","timestamp":ts})),
            TanStackStep::Delta(a, text) => out.push(json!({"type":"TEXT_MESSAGE_CONTENT","messageId":format!("asst-{a}"),"delta":text,"timestamp":ts})),
            TanStackStep::EndMessage(a) => out.push(json!({"type":"TEXT_MESSAGE_END","messageId":format!("asst-{a}"),"timestamp":ts})),
            TanStackStep::Run(start) => out.push(if *start {
                json!({"type":"RUN_STARTED","runId":format!("run-{i}"),"threadId":"thread","timestamp":ts})
            } else {
                json!({"type":"RUN_FINISHED","runId":format!("run-{i}"),"threadId":"thread","timestamp":ts,"metadata":{"tanstack":{"finishReason":"stop"}}})
            }),
            TanStackStep::Call(c, a, ok) => {
                let stage = call_stage.entry(*c).or_insert(0);
                let id = format!("call_{c}");
                let chunk = match *stage {
                    0 if c % 2 == 0 => json!({"type":"TOOL_CALL_START","toolCallId":id,"toolCallName":"get_weather","toolName":"get_weather","parentMessageId":format!("asst-{a}"),"timestamp":ts}),
                    0 => json!({"type":"TOOL_CALL_START","toolCallId":id,"toolName":"lookup","timestamp":ts}),
                    1 => json!({"type":"TOOL_CALL_ARGS","toolCallId":id,"delta":"{\"city\":","timestamp":ts}),
                    2 => json!({"type":"TOOL_CALL_ARGS","toolCallId":id,"delta":"\"Paris\"}","timestamp":ts}),
                    3 => json!({"type":"TOOL_CALL_END","toolCallId":id,"input":{"city":"Paris"},"timestamp":ts}),
                    4 if *ok => json!({"type":"TOOL_CALL_RESULT","toolCallId":id,"messageId":format!("asst-{a}"),"content":"{\"forecast\":\"sunny\"}","role":"tool","timestamp":ts}),
                    4 => json!({"type":"TOOL_CALL_RESULT","toolCallId":id,"messageId":format!("asst-{a}"),"content":"{\"error\":\"down\"}","role":"tool","metadata":{"tanstack":{"state":"output-error"}},"timestamp":ts}),
                    _ => continue,
                };
                *stage += 1;
                out.push(chunk);
            }
        }
    }
    out
}

fn opaque_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z é]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

// ---- golden fixtures

#[test]
fn golden_projections() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/projection");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "golden fixtures missing in {}",
        dir.display()
    );
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut fixture: Value = serde_json::from_str(&text).unwrap();
        let chunks = fixture["chunks"].as_array().expect("chunks").clone();
        check_log(&chunks).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut projection = Projection::new();
        projection.feed_all(&chunks);
        let messages = projection.to_messages();
        let actual = json!({
            "messages": turnkeep::core::protocol::messages_to_value(&messages),
            "renderParts": serde_json::to_value(render_parts(&messages)).unwrap(),
            "nativeMessages": projection.native_messages(),
        });
        if update {
            fixture["expected"] = actual;
            std::fs::write(
                &path,
                serde_json::to_string_pretty(&fixture).unwrap() + "\n",
            )
            .unwrap();
            continue;
        }
        assert_eq!(actual, fixture["expected"], "{}", path.display());
    }
}
