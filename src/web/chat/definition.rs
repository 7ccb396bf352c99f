//! The chat definition a host's `resolveDefinition` returns, turned into the ports the turn
//! needs. Two shapes are read:
//!
//! - turnkeep's, from `defineChat`: `{ id, revision, model, memory, tools, maxToolIterations,
//!   initialMessages }`;
//! - AgentsKit Chat's `ChatDefinition`: `{ id, revision?, chat: { adapter, memory, tools?,
//!   maxToolIterations?, initialMessages? } }`, where `adapter` is an AgentsKit adapter
//!   (`createSource`) and `memory` an AgentsKit `ChatMemory` (it is handed messages with `Date`
//!   timestamps). turnkeep always saves the conversation, so `chat.memory` is required here.
//!
//! A `{ chat: defineChat(...) }` wrapper works too: `id` and `revision` are read from `chat`
//! when the outer object has none.
//!
//! Reading a definition builds its ports (model, memory, tools, initial messages), so a handler
//! keeps what it read ([`DefinitionCache`]): the object `resolveDefinition` returns again, with
//! the same `revision`, is the same definition. A host that changes a definition in place bumps
//! its revision (AgentsKit's rule for a definition that changed, also checked against the session).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::core::chat::controller::ChatConfig;
use crate::core::checks::{is_safe_id, safe_uint};
use crate::core::limits;
use crate::core::protocol::{decode_messages, Message};
use crate::core::session::{ConversationChart, SessionIdentity};
use crate::ports::chat::{ModelAdapter, Tool};
use crate::turn::ChatSetup;
use crate::web::adapters::{model_from_js, JsChatMemory, JsTool};
use crate::web::convert::to_json;

use super::js::get;

/// A resolved chat definition.
pub struct Definition {
    pub id: String,
    pub revision: u64,
    pub model: Rc<dyn ModelAdapter>,
    pub memory: Rc<JsChatMemory>,
    pub tools: Rc<Vec<Box<dyn Tool>>>,
    pub initial_messages: Vec<Message>,
    /// The conversation statechart, when the definition has one (`conversation`).
    pub conversation: Option<ConversationChart>,
    /// What the controller needs from it (read once).
    config: ChatConfig,
}

impl Definition {
    /// Reads and checks a definition object; the error says which field is wrong (for logs).
    pub fn from_js(value: &JsValue) -> Result<Self, String> {
        let chat = get(value, "chat");
        let def = if chat.is_object() { &chat } else { value };
        // The outer object's `id` and `revision`, else the wrapped definition's.
        let outer_or_def = |key: &str| match get(value, key) {
            v if v.is_undefined() => get(def, key),
            v => v,
        };
        let id = outer_or_def("id")
            .as_string()
            .filter(|s| is_safe_id(s))
            .ok_or("definition id must be a SafeId")?;
        let revision = read_revision(value)?;
        let adapter = get(def, "adapter");
        let agentskit = !adapter.is_undefined();
        let model = if agentskit {
            adapter
        } else {
            get(def, "model")
        };
        let model: Rc<dyn ModelAdapter> = Rc::from(model_from_js(&model)?);
        let memory = JsChatMemory::from_js(&get(def, "memory")).map_err(|m| {
            format!("{m} (turnkeep saves every conversation: chat.memory is required)")
        })?;
        let memory = Rc::new(memory.with_dates(agentskit));
        let tools = read_tools(&get(def, "tools"))?;
        let max_tool_iterations = match get(def, "maxToolIterations") {
            v if v.is_undefined() => limits::TOOL_ITERATIONS_MAX_DEFAULT,
            v => v
                .as_f64()
                .filter(|n| {
                    n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(limits::TOOL_ITERATIONS_MAX)
                })
                .map(|n| n as u32)
                .ok_or("maxToolIterations must be an integer within limits")?,
        };
        let initial_messages = match get(def, "initialMessages") {
            v if v.is_undefined() || v.is_null() => Vec::new(),
            v => decode_messages(&to_json(&v)?).map_err(|e| format!("initialMessages: {e}"))?,
        };
        let conversation = read_conversation(&get(def, "conversation"))
            .map_err(|m| format!("conversation: {m}"))?;
        let config = ChatConfig {
            tools: tools.iter().map(|t| t.spec().clone()).collect(),
            max_tool_iterations,
        };
        Ok(Self {
            config,
            id,
            revision,
            model,
            memory,
            tools: Rc::new(tools),
            initial_messages,
            conversation,
        })
    }

    /// What the controller needs from the definition.
    pub fn chat_config(&self) -> ChatConfig {
        self.config.clone()
    }

    /// What a turn of session `session_id` needs besides its ports.
    pub fn chat_setup(&self, session_id: &str) -> ChatSetup {
        ChatSetup {
            identity: SessionIdentity {
                session_id: session_id.to_owned(),
                definition_id: self.id.clone(),
                definition_revision: self.revision,
                conversation: self.conversation.clone(),
            },
            config: self.chat_config(),
            initial_messages: self.initial_messages.clone(),
        }
    }
}

/// The definition's `revision` (the outer object's, else the wrapped definition's; 1 when
/// neither has one).
fn read_revision(value: &JsValue) -> Result<u64, String> {
    let mut revision = get(value, "revision");
    if revision.is_undefined() {
        let chat = get(value, "chat");
        if chat.is_object() {
            revision = get(&chat, "revision");
        }
    }
    if revision.is_undefined() {
        return Ok(1);
    }
    to_json(&revision)
        .ok()
        .as_ref()
        .and_then(safe_uint)
        .filter(|r| *r > 0)
        .ok_or_else(|| "definition revision must be a positive safe integer".to_owned())
}

/// The definitions a handler read, by the identity of the object `resolveDefinition` returned
/// and its revision; at most `DEFINITIONS_CACHED_MAX`, the least recently used goes first.
#[derive(Default)]
pub struct DefinitionCache {
    entries: RefCell<Vec<(JsValue, u64, Rc<Definition>)>>,
}

impl DefinitionCache {
    /// The definition `value` stands for: the one read before when it is the same object at the
    /// same revision, else read now (and kept).
    pub fn resolve(&self, value: &JsValue) -> Result<Rc<Definition>, String> {
        let revision = read_revision(value)?;
        let mut entries = self.entries.borrow_mut();
        if let Some(at) = entries
            .iter()
            .position(|(object, r, _)| *r == revision && object == value)
        {
            let entry = entries.remove(at);
            let definition = entry.2.clone();
            entries.push(entry);
            return Ok(definition);
        }
        drop(entries);
        let definition = Rc::new(Definition::from_js(value)?);
        if value.is_object() {
            let mut entries = self.entries.borrow_mut();
            if entries.len() >= limits::DEFINITIONS_CACHED_MAX {
                entries.remove(0);
            }
            entries.push((value.clone(), definition.revision, definition.clone()));
        }
        Ok(definition)
    }
}

/// The tools, checked as `defineChat` checks them (a host may hand-build a definition): at
/// most `TOOLS_PER_CHAT_MAX`, each valid, no name twice (a model calls a tool by its name).
fn read_tools(value: &JsValue) -> Result<Vec<Box<dyn Tool>>, String> {
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    let array = value
        .dyn_ref::<js_sys::Array>()
        .ok_or("tools must be an array")?;
    if array.length() as usize > limits::TOOLS_PER_CHAT_MAX {
        return Err(format!(
            "at most {} tools are allowed",
            limits::TOOLS_PER_CHAT_MAX
        ));
    }
    let mut tools: Vec<Box<dyn Tool>> = Vec::new();
    for value in array.iter() {
        let tool = JsTool::from_js(&value)?;
        let name = &tool.spec().name;
        if tools.iter().any(|t| &t.spec().name == name) {
            return Err(format!("tool name {name:?} is used by another tool"));
        }
        tools.push(Box::new(tool));
    }
    Ok(tools)
}

/// The definition's `conversation` (AgentsKit's `ConversationDefinition`; a route's `match` and
/// `response` functions are the host's and are not read), as a checked chart.
pub(crate) fn read_conversation(value: &JsValue) -> Result<Option<ConversationChart>, String> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let json = to_json(value).map_err(|_| "must be an object".to_string())?;
    ConversationChart::from_json(&json).map(Some)
}
