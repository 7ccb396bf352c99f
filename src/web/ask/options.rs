//! `createAskServiceHandler(options)`: the host's adapters, read and checked once. A bad option
//! throws an Error with `code: "ASK_INTERNAL"` and the message "The Ask handler configuration
//! is invalid." plus what was wrong (AgentsKit's construction error).

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::generator::GeneratorSource;
use crate::core::ask::site::CorpusMode;
use crate::core::ask::AskFailure;
use crate::core::limits::{ASK_BODY_BYTES_MAX_DEFAULT, ASK_BOOTSTRAP_TIMEOUT_MS_DEFAULT};
use crate::web::adapters::host::required_method;
use crate::web::js::{coded_error, get};
use crate::web::options::OptionReader;

pub struct AskOptions {
    pub authenticate: Function,
    pub resolve_site: Function,
    pub resolve_subject_id: Function,
    pub local: Option<JsValue>,
    pub federated: Option<JsValue>,
    pub generator: GeneratorSource,
    /// `{ load(key, signal), save(key, record, expectedRevision, signal) }`.
    pub session_store: Option<JsValue>,
    pub rate_limit: Option<Function>,
    pub on_metric: Option<Function>,
    pub on_error: Option<Function>,
    pub body_bytes_max: u64,
    pub bootstrap_timeout_ms: u32,
    pub create_id: Option<Function>,
    pub now: Option<Function>,
    pub clock: Option<Function>,
}

pub fn invalid(detail: &str) -> JsValue {
    let row = AskFailure::InvalidConfig.row();
    coded_error(row.code, &format!("{} {detail}", row.message))
}

impl AskOptions {
    pub fn from_js(options: &JsValue) -> Result<Self, JsValue> {
        if !options.is_object() {
            return Err(invalid("options must be an object"));
        }
        let read = OptionReader {
            options,
            invalid: &invalid,
        };
        let retrievers = read.value("retrievers");
        if !retrievers.is_object() {
            return Err(invalid(
                "retrievers must be an object { local?, federated? }",
            ));
        }
        let retriever = |key: &str| -> Result<Option<JsValue>, JsValue> {
            let value = get(&retrievers, key);
            if value.is_undefined() {
                return Ok(None);
            }
            required_method(&value, &format!("retrievers.{key}"), "retrieve")
                .map_err(|e| invalid(&e))?;
            Ok(Some(value))
        };
        let store = read.value("sessionStore");
        let session_store = if store.is_undefined() {
            None
        } else {
            for method in ["load", "save"] {
                required_method(&store, "sessionStore", method).map_err(|e| invalid(&e))?;
            }
            Some(store)
        };
        Ok(Self {
            authenticate: read.required_fn("authenticate")?,
            resolve_site: read.required_fn("resolveSite")?,
            resolve_subject_id: read.required_fn("resolveSubjectId")?,
            local: retriever("local")?,
            federated: retriever("federated")?,
            generator: GeneratorSource::from_js(&read.value("generator"))
                .map_err(|e| invalid(&e))?,
            session_store,
            rate_limit: read.optional_fn("rateLimit")?,
            on_metric: read.optional_fn("onMetric")?,
            on_error: read.optional_fn("onError")?,
            body_bytes_max: read.positive_int("maxBodyBytes", ASK_BODY_BYTES_MAX_DEFAULT)?,
            bootstrap_timeout_ms: read
                .positive_ms("bootstrapTimeoutMs", ASK_BOOTSTRAP_TIMEOUT_MS_DEFAULT)?,
            create_id: read.optional_fn("createId")?,
            now: read.optional_fn("now")?,
            clock: read.optional_fn("clock")?,
        })
    }

    /// The retriever of the site's corpus mode, if the host configured one.
    pub fn retriever(&self, mode: CorpusMode) -> Option<&JsValue> {
        match mode {
            CorpusMode::Local => self.local.as_ref(),
            CorpusMode::Federated => self.federated.as_ref(),
        }
    }
}
