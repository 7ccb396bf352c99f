//! `POST /api/chat` of the demo Worker: the chat pipeline (`crate::web::chat`) with a Rust host
//! — demo auth, the demo definition (id `demo`, revision 1, the demo tools; the model: Workers
//! AI when an `AI` binding is configured, else the demo model or `OPENAI_BASE_URL`'s), storage and memory
//! in the session's `ChatSession` object, every turn published to its `SessionStream`
//! (`chat/<tenant>/<sessionId>`), faults to the console. No JS callback is involved.
//!
//! A turn outlives its response: the running turn is handed to `ctx.waitUntil`, so a client that
//! disconnects leaves it running to its end, published to the stream other tabs follow.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use web_sys::Request;
use worker::Env;

use super::env::{random_id, setting};
use super::routes::demo_tenant;
use super::session_ports::{chat_session, session_stream_log, SessionMemory, TenantSessionStorage};
use super::streams::timing::configured_ms;
use crate::core::chat::controller::ChatConfig;
use crate::core::chat::CallSettings;
use crate::core::limits;
use crate::core::session::SessionIdentity;
use crate::ports::chat::{Clock, Ids, ModelAdapter, Tool};
use crate::ports::{LocalFuture, PortError};
use crate::turn::demo_model::DemoTool;
use crate::turn::{ChatSetup, Fault, FaultReport, Ports, Refusal, Stage};
use crate::web::adapters::host::HostSleep;
use crate::web::adapters::model_from_js;
use crate::web::chat::{ChatHost, ChatLimits, Failure, RequestDeadline, SessionIds};

/// The definition every demo session is bound to.
const DEFINITION_ID: &str = "demo";
const DEFINITION_REVISION: u64 = 1;

/// What a real model is told about the demo (the demo model needs no instructions).
const DEMO_INSTRUCTIONS: &str = "You are the turnkeep demo's assistant. Answer briefly. Call the \
    lookup tool to look something up; the transfer tool moves an amount and needs a person's \
    approval.";

/// The demo Worker's chat host, built once per isolate.
pub struct DemoChatHost {
    env: Env,
    model: Rc<dyn ModelAdapter>,
    tools: Rc<Vec<Box<dyn Tool>>>,
    settings: CallSettings,
}

impl DemoChatHost {
    pub fn new(env: Env) -> Result<Self, JsValue> {
        let (model, real) = demo_model(&env)?;
        let model: Rc<dyn ModelAdapter> =
            Rc::from(model_from_js(&model).map_err(|m| JsValue::from_str(&m))?);
        #[allow(unused_mut)]
        let mut tools: Vec<Box<dyn Tool>> = DemoTool::all()
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Tool>)
            .collect();
        #[cfg(feature = "test-hooks")]
        if setting(&env, "TEST_HOOKS").as_deref() == Some("1") {
            let ledger = super::test_holds::LedgerLookup::from_setting(setting(&env, "TEST_LEDGER_PORT"));
            if let Some(ledger) = ledger {
                tools[0] = Box::new(ledger); // lookup, as the demo lists it
            }
        }
        let settings = CallSettings {
            instructions: real.then(|| DEMO_INSTRUCTIONS.to_owned()),
            ..CallSettings::default()
        };
        Ok(Self {
            env,
            model,
            tools: Rc::new(tools),
            settings,
        })
    }
}

/// The name under which js/cloudflare/worker.mjs hands the Workers AI model to this host: an
/// AI SDK model (`createWorkersAI({ binding: env.AI })(WORKERS_AI_MODEL)`, built in JS because
/// `workers-ai-provider` is a JS package), present only when the `AI` binding is configured.
pub const WORKERS_AI_MODEL_KEY: &str = "TURNKEEP_WORKERS_AI_MODEL";

/// The Worker's chat model and whether it is a real one: the Workers AI model when the JS
/// entry built one, else [`model_descriptor`]'s.
pub fn demo_model(env: &Env) -> Result<(JsValue, bool), JsValue> {
    let built = js_sys::Reflect::get(env.as_ref(), &JsValue::from_str(WORKERS_AI_MODEL_KEY))
        .unwrap_or(JsValue::UNDEFINED);
    if built.is_object() {
        return Ok((built, true));
    }
    let real = setting(env, "OPENAI_BASE_URL").is_some_and(|u| !u.is_empty());
    Ok((model_descriptor(env)?, real))
}

/// The demo model, or an OpenAI-compatible endpoint when `OPENAI_BASE_URL` is set (with
/// `OPENAI_API_KEY`, `OPENAI_MODEL`), as the descriptor the package's model factories make
/// (`DEMO_CHUNK_DELAY_MS` sets the demo model's pause). The descriptor reader checks it.
pub fn model_descriptor(env: &Env) -> Result<JsValue, JsValue> {
    let descriptor = js_sys::Object::new();
    let set = |key: &str, value: JsValue| js_sys::Reflect::set(&descriptor, &key.into(), &value);
    match setting(env, "OPENAI_BASE_URL").filter(|u| !u.is_empty()) {
        Some(base_url) => {
            set(
                "kind",
                crate::web::adapters::models::OPENAI_COMPATIBLE_KIND.into(),
            )?;
            set("baseUrl", base_url.trim_end_matches('/').into())?;
            let model = setting(env, "OPENAI_MODEL").filter(|m| !m.is_empty());
            set(
                "model",
                model.unwrap_or_else(|| "gpt-4o-mini".into()).into(),
            )?;
            set("includeUsage", JsValue::FALSE)?;
            if let Some(key) = setting(env, "OPENAI_API_KEY").filter(|k| !k.is_empty()) {
                set("apiKey", key.into())?;
            }
        }
        None => {
            set("kind", crate::web::adapters::models::DEMO_KIND.into())?;
            if let Some(delay) = setting(env, "DEMO_CHUNK_DELAY_MS").filter(|d| !d.is_empty()) {
                let ms = delay.parse::<f64>().unwrap_or(f64::NAN);
                set("chunkDelayMs", ms.into())?;
            }
        }
    }
    Ok(descriptor.into())
}

impl ChatHost for DemoChatHost {
    /// The defaults of `createChatHandler` (`core::limits`); the turn's deadline and cleanup
    /// budget (and so the lease, `limits::lease_ms`) from `CHAT_TIMEOUT_MS` and
    /// `CHAT_CLEANUP_TIMEOUT_MS` when set (the crash and storm tests shorten them).
    fn limits(&self) -> ChatLimits {
        let ms = |value: u64| u32::try_from(value).unwrap_or(u32::MAX);
        let setting_ms = |name: &str, default: u64| {
            let value = setting(&self.env, name);
            ms(configured_ms(
                value.as_deref(),
                default,
                u64::from(limits::TIMER_MS_MAX),
            ))
        };
        ChatLimits {
            timeout_ms: setting_ms("CHAT_TIMEOUT_MS", limits::TURN_TIMEOUT_MS_DEFAULT),
            cleanup_timeout_ms: setting_ms(
                "CHAT_CLEANUP_TIMEOUT_MS",
                limits::CLEANUP_TIMEOUT_MS_DEFAULT,
            ),
            body_bytes_max: limits::BODY_BYTES_MAX_DEFAULT,
            ui_body_bytes_max: limits::UI_BODY_BYTES_MAX_DEFAULT,
            confirmation_ttl_ms: limits::CONFIRMATION_TTL_MS_DEFAULT,
            snapshot_bytes_per_s: limits::SNAPSHOT_BYTES_PER_S_DEFAULT,
            model_stall_ms: limits::MODEL_STALL_MS_DEFAULT,
        }
    }

    fn authenticate<'a>(
        &'a self,
        request: &'a Request,
        _deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<JsValue, Failure>> {
        let authorization = request.headers().get("authorization").ok().flatten();
        let result = match demo_tenant(authorization.as_deref()) {
            Ok(tenant) => Ok(JsValue::from_str(tenant)),
            Err(refusal) => Err(Failure::Host(super::entry::diagnostic_response(&refusal))),
        };
        Box::pin(async move { result })
    }

    fn resolve<'a>(
        &'a self,
        context: &'a JsValue,
        ids: SessionIds<'a>,
        _deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<(Ports, ChatSetup), Failure>> {
        Box::pin(async move {
            let tenant = context.as_string().unwrap_or_default();
            let session_id = ids.session_id;
            let internal = |stage: Stage| {
                move |error: PortError| Failure::Refused(Refusal::internal(stage, error))
            };
            let object = chat_session(&self.env, &tenant, session_id)
                .map_err(internal(Stage::ResolveDefinition))?;
            let log = session_stream_log(&self.env, &tenant, session_id)
                .map_err(internal(Stage::SessionLog))?;
            let clock = Rc::new(WorkerClock);
            let ports = Ports {
                storage: Rc::new(TenantSessionStorage {
                    env: self.env.clone(),
                    tenant: tenant.clone(),
                }),
                memory: Rc::new(SessionMemory { object }),
                log: Some(Rc::new(log)),
                model: self.model.clone(),
                tools: self.tools.clone(),
                clock: clock.clone(),
                ids: clock,
                sleep: Rc::new(HostSleep),
                faults: Rc::new(ConsoleFaults {
                    session_id: Some(session_id.to_owned()),
                    turn_id: ids.turn_id.map(str::to_owned),
                }),
            };
            #[cfg(feature = "test-hooks")]
            let ports = {
                let turn_id = ids.turn_id.unwrap_or_default();
                match super::test_holds::HoldPoint::of_turn(turn_id) {
                    Some(point) if setting(&self.env, "TEST_HOOKS").as_deref() == Some("1") => {
                        super::test_holds::hold_ports(ports, point, session_id, turn_id)
                    }
                    _ => ports,
                }
            };
            let setup = ChatSetup {
                identity: SessionIdentity {
                    session_id: session_id.to_owned(),
                    definition_id: DEFINITION_ID.into(),
                    definition_revision: DEFINITION_REVISION,
                    conversation: None,
                },
                config: ChatConfig {
                    tools: self.tools.iter().map(|t| t.spec().clone()).collect(),
                    max_tool_iterations: limits::TOOL_ITERATIONS_MAX_DEFAULT,
                    settings: self.settings.clone(),
                },
                initial_messages: Vec::new(),
            };
            Ok((ports, setup))
        })
    }

    fn report(&self, fault: &Fault, session_id: Option<&str>, turn_id: Option<&str>) {
        log_fault(fault, session_id, turn_id);
    }
}

/// Faults of a running turn, to the console (the Worker's log).
struct ConsoleFaults {
    session_id: Option<String>,
    turn_id: Option<String>,
}

impl FaultReport for ConsoleFaults {
    fn report(&self, fault: &Fault) {
        log_fault(fault, self.session_id.as_deref(), self.turn_id.as_deref());
    }
}

fn log_fault(fault: &Fault, session_id: Option<&str>, turn_id: Option<&str>) {
    let cause = fault
        .error
        .cause
        .as_ref()
        .and_then(|c| c.downcast_ref::<JsValue>())
        .cloned()
        .unwrap_or_else(|| JsValue::from_str(&fault.error.message));
    web_sys::console::error_2(
        &format!(
            "chat {} failed (session {}, turn {}):",
            fault.stage.as_str(),
            session_id.unwrap_or("-"),
            turn_id.unwrap_or("-")
        )
        .into(),
        &cause,
    );
}

/// The Worker's clock and ids: `Date.now()`, and 128 random bits per id (getrandom).
struct WorkerClock;

impl Clock for WorkerClock {
    fn now_ms(&self) -> u64 {
        super::wait::now_ms()
    }
}

impl Ids for WorkerClock {
    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}-{}", random_id())
    }

    fn event_id(&self) -> String {
        random_id()
    }
}
