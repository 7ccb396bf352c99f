//! What a log has started and not yet ended that its messages cannot say: the messages still
//! open (a run's end closes them), the argument text of tool calls still streaming (a delta
//! continues it), which message each reasoning span belongs to, and the newest chunk time
//! (the `createdAt` of messages whose chunks carry none). A seed carries it as `inFlight`
//! (`resolveChatSnapshot`, `ChatProjection.snapshot()`), so a projection started from the seed
//! and fed the suffix ends where a reader of the whole log ends — the seed → live law
//! (`tests/projection_props.rs`) — at every cut, not only between runs.

use serde_json::{json, Map, Value};

use super::Projection;

impl Projection {
    /// `{ messages, toolArgs, reasoning, openReasoning, lastMs }`: ids of the open messages, the
    /// argument text so far of each call still streaming, each reasoning span's message id, the
    /// spans still open, and the newest chunk `timestamp` (epoch ms).
    pub fn in_flight(&self) -> Value {
        let open: Vec<&str> = self
            .entries
            .iter()
            .filter(|e| e.open)
            .map(|e| e.message.id.as_str())
            .collect();
        let mut args: Vec<(&String, &String)> = self.args_text.iter().collect();
        args.sort();
        let tool_args: Map<String, Value> = args
            .into_iter()
            .map(|(id, text)| (id.clone(), Value::String(text.clone())))
            .collect();
        let mut spans: Vec<(&String, &usize)> = self.reasoning.iter().collect();
        spans.sort();
        let reasoning: Map<String, Value> = spans
            .into_iter()
            .filter_map(|(span, &at)| {
                let id = &self.entries.get(at)?.message.id;
                Some((span.clone(), Value::String(id.clone())))
            })
            .collect();
        json!({
            "messages": open,
            "toolArgs": tool_args,
            "reasoning": reasoning,
            "openReasoning": self.open_reasoning,
            "lastMs": self.last_ms,
        })
    }

    /// The same projection, knowing what was in flight when its messages were taken (a seed's
    /// `inFlight`, as [`Projection::in_flight`] writes it). Entries naming a message or call
    /// the projection does not hold are skipped; anything unreadable is ignored.
    pub fn with_in_flight(mut self, seed: &Value) -> Self {
        let strings = |key: &str| -> Vec<String> {
            seed.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        for id in strings("messages") {
            if let Some(&at) = self.by_id.get(&id) {
                self.entries[at].open = true;
            }
        }
        for (call, text) in seed
            .get("toolArgs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let (true, Some(text)) = (self.calls.contains_key(call), text.as_str()) {
                self.args_text.insert(call.clone(), text.to_owned());
            }
        }
        for (span, id) in seed
            .get("reasoning")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(&at) = id.as_str().and_then(|id| self.by_id.get(id)) {
                self.reasoning.insert(span.clone(), at);
            }
        }
        self.open_reasoning = strings("openReasoning")
            .into_iter()
            .filter(|span| self.reasoning.contains_key(span))
            .collect();
        if let Some(ms) = seed.get("lastMs").and_then(Value::as_u64) {
            self.last_ms = self.last_ms.max(ms);
        }
        self
    }

    /// True when nothing is in flight: no open message, streaming call arguments or open
    /// reasoning span (a seed's `messages` alone then say everything a live reader needs).
    pub fn is_settled(&self) -> bool {
        !self.entries.iter().any(|e| e.open)
            && self.args_text.is_empty()
            && self.open_reasoning.is_empty()
    }
}
