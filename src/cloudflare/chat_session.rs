//! The `ChatSession` Durable Object (workers-rs `#[durable_object]`): one per (tenant, session),
//! SQLite-backed, holding the session envelope (compare-and-set) and the canonical messages
//! ([`super::store`]). The Worker reaches it over RPC through a stub (`super::session_ports`);
//! its methods keep the names and values of the earlier JS class, so JS callers (the storage
//! test Worker) and the stored rows carry over unchanged.
//!
//! The Rust struct is `ChatSessionObject` because the npm build already exports a JS class named
//! `ChatSession` (`resumeChatSession`'s result); the Worker entry exports it as `ChatSession`,
//! the class name wrangler.toml binds.

use wasm_bindgen::prelude::*;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use super::store::ChatSessionStore;

#[durable_object(fetch)]
pub struct ChatSessionObject {
    store: ChatSessionStore,
    #[cfg(feature = "test-hooks")]
    _live: super::test_holds::LiveObject,
}

impl DurableObject for ChatSessionObject {
    fn new(state: State, _env: Env) -> Self {
        // A class missing from `new_sqlite_classes` has no SQL storage: a deployment error that
        // no request can work around, so it fails loudly here.
        let store =
            ChatSessionStore::open(&state.storage()).unwrap_or_else(|e| wasm_bindgen::throw_val(e));
        Self {
            store,
            #[cfg(feature = "test-hooks")]
            _live: super::test_holds::LiveObject::new(super::test_holds::ObjectKind::ChatSession),
        }
    }

    /// Everything goes over RPC; a plain fetch is a mistake of the caller.
    async fn fetch(&self, _req: Request) -> Result<Response> {
        Response::error("ChatSession is reached over RPC", 404)
    }
}

/// The RPC methods (called on a stub; see the module doc).
#[wasm_bindgen]
impl ChatSessionObject {
    /// SessionStorage.load: the envelope as JSON text, or undefined when absent.
    #[wasm_bindgen(js_name = loadSession)]
    pub fn load_session(&self, session_id: JsValue) -> std::result::Result<JsValue, JsValue> {
        self.store.load_session(session_id)
    }

    /// SessionStorage.save: compare-and-set on the stored cursor; false on conflict.
    #[wasm_bindgen(js_name = saveSession)]
    pub fn save_session(
        &self,
        snapshot: JsValue,
        expected_cursor: JsValue,
    ) -> std::result::Result<bool, JsValue> {
        self.store.save_session(snapshot, expected_cursor)
    }

    /// SessionStorage.delete: true when an envelope existed.
    #[wasm_bindgen(js_name = deleteSession)]
    pub fn delete_session(&self, session_id: JsValue) -> std::result::Result<bool, JsValue> {
        self.store.delete_session(session_id)
    }

    /// ChatMemory.load: the canonical messages ([] when none).
    #[wasm_bindgen(js_name = loadMessages)]
    pub fn load_messages(&self) -> std::result::Result<JsValue, JsValue> {
        self.store.load_messages()
    }

    /// ChatMemory.load as JSON text (the Worker's Rust adapter).
    #[wasm_bindgen(js_name = loadMessagesJson)]
    pub fn load_messages_json(&self) -> std::result::Result<String, JsValue> {
        self.store.load_messages_json()
    }

    /// ChatMemory.save: replaces the conversation (validated; rows of at most 256 KiB). Takes
    /// the messages as an array or as its JSON text, and the save's memory fence when it has
    /// one (refused under a lower fence than the last).
    #[wasm_bindgen(js_name = saveMessages)]
    pub fn save_messages(
        &self,
        messages: JsValue,
        fence: JsValue,
    ) -> std::result::Result<(), JsValue> {
        self.store.save_messages(messages, fence)
    }

    /// Envelope (JSON text or null) and messages (JSON text) read in one step, so they are
    /// consistent with each other.
    pub fn view(&self, session_id: JsValue) -> std::result::Result<JsValue, JsValue> {
        let session = self.store.load_session(session_id)?;
        let out = js_sys::Object::new();
        let session = if session.is_undefined() {
            JsValue::NULL
        } else {
            session
        };
        js_sys::Reflect::set(&out, &"session".into(), &session)?;
        js_sys::Reflect::set(
            &out,
            &"messages".into(),
            &self.store.load_messages_json()?.into(),
        )?;
        Ok(out.into())
    }

    /// Row layout: { sessionRows, messageRows, rowBytesMax }.
    pub fn stats(&self) -> std::result::Result<JsValue, JsValue> {
        self.store.stats()
    }
}
