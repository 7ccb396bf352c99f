//! The chat definition a host's `resolveDefinition` returns (or `defineChat` is given), turned
//! into the ports the turn needs: the one definition reader. Two shapes are read, each option
//! checked against its shape's table in `core::chat::definition` (an unknown option, or one
//! turnkeep cannot honour, is a config error naming it):
//!
//! - turnkeep's, from `defineChat`: `{ id, revision, model, memory, tools, maxToolIterations,
//!   initialMessages, conversation, instructions, temperature, maxOutputTokens, topP,
//!   stopSequences, toolChoice, providerOptions }`;
//! - AgentsKit Chat's `ChatDefinition`: `{ id, revision?, chat: { adapter, memory, tools?,
//!   maxToolIterations?, initialMessages?, systemPrompt?, temperature?, maxTokens?, observers?,
//!   onError?, validateArgs? }, conversation? }`, where `adapter` is an AgentsKit adapter
//!   (`createSource`, or any model turnkeep takes), `memory` an AgentsKit `ChatMemory` (it is
//!   handed messages with `Date` timestamps) and `tools` AgentsKit tools (`schema`,
//!   `execute(args, { messages, call })`). turnkeep always saves the conversation, so
//!   `chat.memory` is required here.
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

use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use crate::core::chat::controller::ChatConfig;
use crate::core::chat::definition::{
    check_names, setting_of, OptionRow, AGENTSKIT_CHAT_OPTIONS, AGENTSKIT_DEFINITION_OPTIONS,
    DEFINE_OPTIONS,
};
use crate::core::chat::CallSettings;
use crate::core::checks::{is_safe_id, safe_uint};
use crate::core::limits;
use crate::core::protocol::{decode_messages, Message};
use crate::core::session::{ConversationChart, SessionIdentity};
use crate::ports::chat::{ChatMemory, ModelAdapter, Tool};
use crate::turn::ChatSetup;
use crate::web::adapters::observers::{ObservedMemory, ObservedModel, ObservedTool, Observers};
use crate::web::adapters::{model_from_js, JsChatMemory, JsTool, ToolRules};
use crate::web::convert::to_json;

use super::js::{coded_error, get, set};

/// A resolved chat definition.
pub struct Definition {
    pub id: String,
    pub revision: u64,
    pub model: Rc<dyn ModelAdapter>,
    pub memory: Rc<dyn ChatMemory>,
    pub tools: Rc<Vec<Box<dyn Tool>>>,
    pub initial_messages: Vec<Message>,
    /// The conversation statechart, when the definition has one (`conversation`).
    pub conversation: Option<ConversationChart>,
    /// What the controller needs from it (read once).
    config: ChatConfig,
}

/// Which table an object's options are checked against, and how its parts are read.
struct Shape {
    /// The object with the model, memory and tools (the definition, or its `chat`).
    def: JsValue,
    /// Its options' table.
    table: &'static [OptionRow],
    /// `def`'s name in errors.
    at: String,
    /// An AgentsKit `chat`: an adapter, AgentsKit tools and memory.
    agentskit: bool,
}

impl Shape {
    /// Tells the shapes apart and checks every option name. `at` names the whole definition in
    /// errors (`defineChat`, `definition`).
    fn of(value: &JsValue, at: &str) -> Result<Self, String> {
        if !value.is_object() {
            return Err(format!("{at} must be an object"));
        }
        let chat = get(value, "chat");
        if !chat.is_object() {
            check_names(
                DEFINE_OPTIONS,
                own_keys(value).iter().map(String::as_str),
                at,
            )?;
            return Ok(Self {
                def: value.clone(),
                table: DEFINE_OPTIONS,
                at: at.to_owned(),
                agentskit: false,
            });
        }
        check_names(
            AGENTSKIT_DEFINITION_OPTIONS,
            own_keys(value).iter().map(String::as_str),
            at,
        )?;
        // `{ chat: defineChat(...) }` holds a model; an AgentsKit `chat` an adapter.
        let agentskit = get(&chat, "model").is_undefined() || !get(&chat, "adapter").is_undefined();
        let table = if agentskit {
            AGENTSKIT_CHAT_OPTIONS
        } else {
            DEFINE_OPTIONS
        };
        let inner = format!("{at}.chat");
        check_names(table, own_keys(&chat).iter().map(String::as_str), &inner)?;
        Ok(Self {
            def: chat,
            table,
            at: inner,
            agentskit,
        })
    }
}

/// An object's own enumerable string keys.
fn own_keys(value: &JsValue) -> Vec<String> {
    use wasm_bindgen::JsCast;
    Object::keys(value.unchecked_ref::<Object>())
        .iter()
        .filter_map(|k| k.as_string())
        .collect()
}

impl Definition {
    /// Reads and checks a definition object; the error says which field is wrong (for logs and
    /// config errors). `at` names the definition in it.
    pub fn from_js(value: &JsValue, at: &str) -> Result<Self, String> {
        let shape = Shape::of(value, at)?;
        let def = &shape.def;
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
        let model_key = if shape.agentskit { "adapter" } else { "model" };
        let model: Rc<dyn ModelAdapter> = Rc::from(model_from_js(&get(def, model_key))?);
        let memory = JsChatMemory::from_js(&get(def, "memory")).map_err(|m| {
            format!("{m} (turnkeep saves every conversation: chat.memory is required)")
        })?;
        let memory: Rc<dyn ChatMemory> = Rc::new(memory.with_dates(shape.agentskit));
        let rules = ToolRules {
            agentskit: shape.agentskit,
            validate_args: match get(def, "validateArgs") {
                v if v.is_undefined() || v.is_null() => None,
                v => Some(
                    wasm_bindgen::JsCast::dyn_into::<js_sys::Function>(v)
                        .map_err(|_| format!("{}.validateArgs must be a function", shape.at))?,
                ),
            },
        };
        let tools = read_tools(&get(def, "tools"), &rules)?;
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
        let conversation = match get(value, "conversation") {
            v if v.is_undefined() => get(def, "conversation"),
            v => v,
        };
        let conversation =
            read_conversation(&conversation).map_err(|m| format!("conversation: {m}"))?;
        let specs: Vec<_> = tools.iter().map(|t| t.spec().clone()).collect();
        let settings = read_settings(&shape, &specs)?;
        let observers = if shape.agentskit {
            Observers::from_js(&get(def, "observers"), &get(def, "onError"))?
        } else {
            None
        };
        let (model, memory, tools) = match observers {
            None => (model, memory, tools),
            Some(observers) => observe(model, memory, tools, observers),
        };
        let config = ChatConfig {
            tools: specs,
            max_tool_iterations,
            settings,
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
        let definition = Rc::new(Definition::from_js(value, "definition")?);
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

/// The call settings the definition's options hold (`instructions` / `systemPrompt`, ...).
fn read_settings(
    shape: &Shape,
    tools: &[crate::core::chat::ToolSpec],
) -> Result<CallSettings, String> {
    let mut settings = CallSettings::default();
    for name in own_keys(&shape.def) {
        let Some(setting) = setting_of(shape.table, &name) else {
            continue;
        };
        let value = get(&shape.def, &name);
        if value.is_undefined() {
            continue;
        }
        let json = to_json(&value).map_err(|_| format!("{}.{name} must be JSON", shape.at))?;
        settings.set(setting, &format!("{}.{name}", shape.at), &json)?;
    }
    settings.check_tools(&format!("{}.toolChoice", shape.at), tools)?;
    Ok(settings)
}

/// The model, memory and tools, each telling the observers what happens.
fn observe(
    model: Rc<dyn ModelAdapter>,
    memory: Rc<dyn ChatMemory>,
    tools: Vec<Box<dyn Tool>>,
    observers: Rc<Observers>,
) -> (Rc<dyn ModelAdapter>, Rc<dyn ChatMemory>, Vec<Box<dyn Tool>>) {
    let model = Rc::new(ObservedModel {
        inner: model,
        observers: observers.clone(),
    });
    let memory = Rc::new(ObservedMemory {
        inner: memory,
        observers: observers.clone(),
    });
    let tools = tools
        .into_iter()
        .map(|inner| {
            Box::new(ObservedTool {
                inner,
                observers: observers.clone(),
            }) as Box<dyn Tool>
        })
        .collect();
    (model, memory, tools)
}

/// The tools, checked as `defineChat` checks them (a host may hand-build a definition): at
/// most `TOOLS_PER_CHAT_MAX`, each valid, no name twice (a model calls a tool by its name).
fn read_tools(value: &JsValue, rules: &ToolRules) -> Result<Vec<Box<dyn Tool>>, String> {
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
        let tool = JsTool::from_js(&value, rules)?;
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

/// `readChatDefinition(options)` (behind `defineChat`): reads `options` with the one reader
/// above and returns them frozen (turnkeep's shape with its defaults: `tools`,
/// `maxToolIterations` and `initialMessages` as read), or throws an Error with
/// `code: 'SERVER_INVALID_CONFIG'` naming the first bad option.
#[wasm_bindgen(js_name = readChatDefinition)]
pub fn read_chat_definition(options: JsValue) -> Result<JsValue, JsValue> {
    let code = crate::core::protocol::BoundaryError::InvalidConfig
        .row()
        .code;
    let invalid = |m: String| coded_error(code, &format!("defineChat: {m}"));
    let definition = Definition::from_js(&options, "defineChat").map_err(invalid)?;
    let out = Object::new();
    for key in own_keys(&options) {
        set(&out, &key, get(&options, &key));
    }
    if get(&options, "chat").is_undefined() {
        let tools = get(&options, "tools");
        let tools = if tools.is_undefined() {
            Array::new().into()
        } else {
            tools
        };
        set(&out, "tools", Object::freeze(&Array::from(&tools)));
        set(
            &out,
            "maxToolIterations",
            definition.config.max_tool_iterations,
        );
        let initial = get(&options, "initialMessages");
        let initial = if initial.is_undefined() {
            Array::new().into()
        } else {
            initial
        };
        set(
            &out,
            "initialMessages",
            Object::freeze(&Array::from(&initial)),
        );
    }
    Ok(Object::freeze(&out).into())
}
