//! `resumeChatSession(definition, { sessionId, storage, now?, signal? })` with AgentsKit Chat's
//! shape: a Promise of a `ChatSession` whose `claimTurn`, `releaseTurn` and `persist` are
//! compare-and-set saves through the host's `SessionStorage`, run one at a time in call order.
//!
//! Every transition is the core's (`crate::core::session`: resume, claim, release, cursor
//! advance). A queued job decides against the envelope as last committed, saves the envelope
//! the core returned through the one commit site (`turn::commit_session`, bounded by the host's
//! signal only) and keeps it only when the store said `true`; `false` rejects with a
//! `SessionConflictError` and leaves the session as it was.
//!
//! Not carried over from AgentsKit: conversation statecharts (a definition with `conversation`
//! is refused) and `createConfirmation` (turnkeep resolves confirmations over HTTP).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::AbortSignal;

use super::adapters::host::{token_of, HostSleep};
use super::adapters::JsSessionStorage;
use super::convert::js_error;
use super::js::{get, get_fn, set};
use crate::core::checks::{is_safe_id, safe_uint};
use crate::core::limits::CLEANUP_TIMEOUT_MS_DEFAULT;
use crate::core::session::{
    self, advance_cursor, claim_turn, release_turn, ClaimDecision, ResumeError, SessionEnvelope,
    SessionIdentity, SessionWrite, TurnOutcome, WriteKind,
};
use crate::ports::chat::Clock;
use crate::ports::session::SessionStorage;
use crate::turn::{commit_session, IgnoreFaults, SaveFailure, Saved, SessionPorts, WriteBudget};

/// AgentsKit's texts for the failures a host can cause (thrown as `ConfigError`).
const REVISION_INVALID: &str = "Chat definition revision is invalid.";
const DEFINITION_INVALID: &str = "Chat definition identity is invalid.";
const SESSION_ID_INVALID: &str = "Chat session identity is invalid.";
const SNAPSHOT_INCOMPATIBLE: &str = "Session snapshot is incompatible with this chat definition.";
const CLAIM_INVALID: &str = "Turn claim is invalid.";
const CONVERSATION_INVALID: &str = "Chat definition conversation is invalid.";
const CONFLICT: &str = "Session snapshot changed in another client.";

/// A resumed session (AgentsKit's `ChatSession`, without in-process confirmations: turnkeep
/// resolves them over HTTP).
#[wasm_bindgen]
pub struct ChatSession {
    shared: Rc<Shared>,
}

struct Shared {
    identity: SessionIdentity,
    chat: JsValue,
    storage: JsSessionStorage,
    signal: Option<AbortSignal>,
    now: Option<Function>,
    state: RefCell<State>,
    /// The last queued job: the next one starts when it settled.
    tail: RefCell<Option<Promise>>,
}

struct State {
    envelope: SessionEnvelope,
    /// Saved at least once: saves pass the cursor as `expectedCursor`, else `undefined`.
    exists: bool,
}

/// `resumeChatSession(definition, options)` -> Promise of a `ChatSession`. A stored value that
/// does not decode or belongs to another session or definition rejects with a `ConfigError`
/// (`code: 'AK_CONFIG_INVALID'`); `null`/`undefined` from `load` starts a new session.
#[wasm_bindgen(js_name = resumeChatSession)]
pub fn resume_chat_session(definition: JsValue, options: JsValue) -> Promise {
    future_to_promise(async move { resume(&definition, &options).await.map(JsValue::from) })
}

async fn resume(definition: &JsValue, options: &JsValue) -> Result<ChatSession, JsValue> {
    let identity = identity(definition, options)?;
    let signal = get(options, "signal").dyn_into::<AbortSignal>().ok();
    let storage = JsSessionStorage::from_js(&get(options, "storage"))
        .map_err(|m| js_error(&format!("resumeChatSession: {m}")))?;
    let now = get_fn(options, "now");
    let stored = storage
        .load(&identity.session_id, &token_of(&get(options, "signal")))
        .await
        .map_err(|e| js_error(&e.message))?;
    let resumed = session::resume_session(stored.as_ref(), &identity, now_ms(now.as_ref())?)
        .map_err(|e| config_error(resume_message(&e)))?;
    Ok(ChatSession {
        shared: Rc::new(Shared {
            identity,
            chat: get(definition, "chat"),
            storage,
            signal,
            now,
            state: RefCell::new(State {
                exists: resumed.expected_cursor.is_some(),
                envelope: resumed.envelope,
            }),
            tail: RefCell::new(None),
        }),
    })
}

fn identity(definition: &JsValue, options: &JsValue) -> Result<SessionIdentity, JsValue> {
    let conversation = crate::web::chat::read_conversation(&get(definition, "conversation"))
        .map_err(|_| config_error(CONVERSATION_INVALID))?;
    let definition_id = get(definition, "id")
        .as_string()
        .filter(|id| is_safe_id(id))
        .ok_or_else(|| config_error(DEFINITION_INVALID))?;
    let definition_revision = match get(definition, "revision") {
        v if v.is_undefined() => 1,
        v => v
            .as_f64()
            .and_then(|n| safe_uint(&serde_json::json!(n)))
            .filter(|r| *r > 0)
            .ok_or_else(|| config_error(REVISION_INVALID))?,
    };
    let session_id = get(options, "sessionId")
        .as_string()
        .filter(|id| is_safe_id(id))
        .ok_or_else(|| config_error(SESSION_ID_INVALID))?;
    Ok(SessionIdentity {
        session_id,
        definition_id,
        definition_revision,
        conversation,
    })
}

fn resume_message(e: &ResumeError) -> &'static str {
    match e {
        ResumeError::Corrupt(d) | ResumeError::UnsupportedVersion(d) => d.reference_message(),
        ResumeError::ForeignSession { .. } | ResumeError::IncompatibleDefinition { .. } => {
            SNAPSHOT_INCOMPATIBLE
        }
        ResumeError::InvalidIdentity { .. } => SESSION_ID_INVALID,
    }
}

#[wasm_bindgen]
impl ChatSession {
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> String {
        self.shared.identity.session_id.clone()
    }

    #[wasm_bindgen(getter, js_name = definitionId)]
    pub fn definition_id(&self) -> String {
        self.shared.identity.definition_id.clone()
    }

    #[wasm_bindgen(getter, js_name = definitionRevision)]
    pub fn definition_revision(&self) -> f64 {
        self.shared.identity.definition_revision as f64
    }

    /// The definition's `chat`, as given.
    #[wasm_bindgen(getter)]
    pub fn chat(&self) -> JsValue {
        self.shared.chat.clone()
    }

    /// `updateChat(chat)`: returns `chat` (there is no conversation routing to wrap it in).
    #[wasm_bindgen(js_name = updateChat)]
    pub fn update_chat(&self, chat: JsValue) -> JsValue {
        chat
    }

    /// `getConversationSnapshot()`: the stored conversation (`{ state, decisions }`), or
    /// `undefined` for a definition without a statechart.
    #[wasm_bindgen(js_name = getConversationSnapshot)]
    pub fn get_conversation_snapshot(&self) -> JsValue {
        let state = self.shared.state.borrow();
        match state.envelope.to_value().get("conversation") {
            Some(conversation) => crate::web::convert::from_json(conversation),
            None => JsValue::UNDEFINED,
        }
    }

    /// The cursor of the last committed save (0 for a session never saved).
    #[wasm_bindgen(js_name = getCursor)]
    pub fn get_cursor(&self) -> f64 {
        self.shared.state.borrow().envelope.cursor as f64
    }

    /// `createConfirmation()`: not supported; throws.
    #[wasm_bindgen(js_name = createConfirmation)]
    pub fn create_confirmation(&self) -> Result<JsValue, JsValue> {
        Err(config_error(
            "createConfirmation is not supported by turnkeep: confirmations are resolved over HTTP (client.confirmation.resolve).",
        ))
    }

    /// `persist(signal?)` -> Promise of `undefined`: saves the session as it is with cursor + 1.
    pub fn persist(&self, signal: JsValue) -> Promise {
        let decide = |envelope: &SessionEnvelope, now| {
            Ok(Some((WriteKind::Keep, advance_cursor(envelope, now)?)))
        };
        self.enqueue(signal, decide, Resolve::Nothing)
    }

    /// `claimTurn(turnId, leaseMs, signal?)` -> Promise of `true` when this turn now holds the
    /// lease, `false` when another turn holds it or `turnId` already finished.
    #[wasm_bindgen(js_name = claimTurn)]
    pub fn claim_turn(&self, turn_id: JsValue, lease_ms: JsValue, signal: JsValue) -> Promise {
        let turn_id = turn_id.as_string().filter(|id| is_safe_id(id));
        let lease_ms = lease_ms
            .as_f64()
            .and_then(|n| safe_uint(&serde_json::json!(n)))
            .filter(|ms| *ms > 0);
        let (Some(turn_id), Some(lease_ms)) = (turn_id, lease_ms) else {
            return Promise::reject(&config_error(CLAIM_INVALID));
        };
        let decide = move |envelope: &SessionEnvelope, now| match claim_turn(
            envelope, &turn_id, now, lease_ms,
        )? {
            ClaimDecision::Claimed(next) => Ok(Some((WriteKind::Claim { turn_id }, next))),
            ClaimDecision::Busy { .. } | ClaimDecision::Replayed { .. } => Ok(None),
        };
        self.enqueue(signal, decide, Resolve::Saved)
    }

    /// `releaseTurn(turnId, outcome, signal?)`: ends the turn that holds the lease with
    /// `'completed'` or `'indeterminate'`; does nothing when `turnId` does not hold it.
    #[wasm_bindgen(js_name = releaseTurn)]
    pub fn release_turn(&self, turn_id: JsValue, outcome: JsValue, signal: JsValue) -> Promise {
        let outcome = match outcome.as_string().as_deref() {
            Some("completed") => TurnOutcome::Completed,
            Some("indeterminate") => TurnOutcome::Indeterminate,
            _ => return Promise::reject(&config_error("Turn outcome is invalid.")),
        };
        let turn_id = turn_id.as_string().unwrap_or_default();
        let decide = move |envelope: &SessionEnvelope, now| {
            let holds = envelope
                .active_turn
                .as_ref()
                .is_some_and(|a| a.turn_id == turn_id);
            Ok(if holds {
                let next = release_turn(envelope, &turn_id, outcome, now)?;
                Some((WriteKind::Release { turn_id }, next))
            } else {
                None
            })
        };
        self.enqueue(signal, decide, Resolve::Nothing)
    }
}

/// What a queued job decided: the write and the envelope to save, or `None` for "nothing to save".
type Decide = Result<Option<(WriteKind, SessionEnvelope)>, session::LeaseError>;

/// What a job's promise resolves to.
#[derive(Clone, Copy)]
enum Resolve {
    /// Whether something was saved (`claimTurn`).
    Saved,
    /// `undefined` (`persist`, `releaseTurn`).
    Nothing,
}

impl ChatSession {
    /// Runs `decide` after every earlier job settled, against the committed envelope; saves and
    /// commits its envelope. Resolves as `resolve` says.
    fn enqueue<F>(&self, signal: JsValue, decide: F, resolve: Resolve) -> Promise
    where
        F: FnOnce(&SessionEnvelope, u64) -> Decide + 'static,
    {
        let shared = Rc::clone(&self.shared);
        let previous = self.shared.tail.borrow_mut().take();
        let job = future_to_promise(async move {
            if let Some(previous) = previous {
                let _ = JsFuture::from(previous).await; // its failure is its caller's
            }
            let saved = shared.run(signal, decide).await?;
            Ok(match resolve {
                Resolve::Saved => JsValue::from(saved),
                Resolve::Nothing => JsValue::UNDEFINED,
            })
        });
        // Awaiting it is the next job's first step, and a failure there is ignored: the queue
        // keeps going after a failed job (its caller got the rejection).
        *self.shared.tail.borrow_mut() = Some(job.clone());
        job
    }
}

impl Shared {
    async fn run<F>(&self, signal: JsValue, decide: F) -> Result<bool, JsValue>
    where
        F: FnOnce(&SessionEnvelope, u64) -> Decide,
    {
        let now = now_ms(self.now.as_ref())?;
        let write = {
            let state = self.state.borrow();
            let decided = decide(&state.envelope, now).map_err(|e| js_error(&e.to_string()))?;
            let expected_cursor = state.exists.then_some(state.envelope.cursor);
            decided.map(|(kind, next)| {
                SessionWrite::on_loaded(kind, &state.envelope, expected_cursor, next, now)
            })
        };
        let Some(write) = write else {
            return Ok(false);
        };
        let next = write.next.clone();
        let signal = signal
            .dyn_into::<AbortSignal>()
            .ok()
            .or_else(|| self.signal.clone());
        let cancel = token_of(&signal.map_or(JsValue::UNDEFINED, JsValue::from));
        let ports = SessionPorts {
            storage: &self.storage,
            clock: &HostNow(self.now.as_ref()),
            sleep: &HostSleep,
            // No onError here: a failure rejects the caller's promise with its cause.
            faults: &IgnoreFaults,
            cleanup_budget_ms: CLEANUP_TIMEOUT_MS_DEFAULT,
        };
        match commit_session(&ports, write, WriteBudget::Host(&cancel)).await {
            Ok(Saved::Written) => {}
            Ok(Saved::Conflict) => return Err(named_error("SessionConflictError", CONFLICT)),
            Err(SaveFailure::Store(e)) => return Err(js_error(&e.message)),
            Err(failure) => {
                let fault = failure.fault().map(|f| f.error.message);
                return Err(js_error(
                    &fault.unwrap_or_else(|| "session save failed".into()),
                ));
            }
        }
        let mut state = self.state.borrow_mut();
        state.envelope = next;
        state.exists = true;
        Ok(true)
    }
}

/// The host's clock (`options.now`) as a port; `Date.now()` when it has none or it fails. Only
/// a claim that a deadline overtook reads it, and this API has no deadline.
struct HostNow<'a>(Option<&'a Function>);

impl Clock for HostNow<'_> {
    fn now_ms(&self) -> u64 {
        now_ms(self.0).unwrap_or_else(|_| js_sys::Date::now() as u64)
    }
}

/// `now()` as epoch milliseconds: the host's clock (`options.now`, returning a `Date`) or `Date.now()`.
fn now_ms(now: Option<&Function>) -> Result<u64, JsValue> {
    let ms = match now {
        None => js_sys::Date::now(),
        Some(now) => now
            .call0(&JsValue::UNDEFINED)?
            .dyn_into::<js_sys::Date>()
            .map(|d| d.get_time())
            .map_err(|_| js_error("resumeChatSession: options.now() must return a Date"))?,
    };
    safe_uint(&Value::from(ms))
        .ok_or_else(|| js_error("resumeChatSession: the clock is not a valid time"))
}

/// AgentsKit's `ConfigError`: `name: 'ConfigError'`, `code: 'AK_CONFIG_INVALID'`.
fn config_error(message: &str) -> JsValue {
    let error = named_error("ConfigError", message);
    set(error.unchecked_ref(), "code", "AK_CONFIG_INVALID");
    error
}

fn named_error(name: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name(name);
    error.into()
}
