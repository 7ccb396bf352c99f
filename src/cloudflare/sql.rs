//! `ctx.storage.sql` and `ctx.storage.transactionSync` of a SQLite-backed Durable Object,
//! reached duck-typed through js-sys (no `worker` crate): the store hands over the JS
//! `ctx.storage` object and this wrapper calls its methods by name.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The SQL interface of one Durable Object's storage. Cloning shares the same JS objects.
#[derive(Clone)]
pub struct Sql {
    storage: JsValue,
    sql: JsValue,
    exec: Function,
    transaction_sync: Function,
}

impl Sql {
    /// Wraps `ctx.storage`. The error says what is missing (for the developer wiring the class).
    pub fn from_storage(storage: &JsValue) -> Result<Self, String> {
        let sql = get(storage, "sql");
        let exec = get(&sql, "exec").dyn_into::<Function>().map_err(|_| {
            "ctx.storage.sql.exec is missing: declare the class in a `new_sqlite_classes` migration".to_string()
        })?;
        let transaction_sync = get(storage, "transactionSync")
            .dyn_into::<Function>()
            .map_err(|_| "ctx.storage.transactionSync is missing".to_string())?;
        Ok(Self {
            storage: storage.clone(),
            sql,
            exec,
            transaction_sync,
        })
    }

    /// Runs one statement with `?` bindings and ignores its result rows.
    pub fn run(&self, query: &str, bindings: &[JsValue]) -> Result<(), JsValue> {
        self.exec(query, bindings).map(|_| ())
    }

    /// Runs one query and returns every result row (plain objects keyed by column name).
    pub fn rows(&self, query: &str, bindings: &[JsValue]) -> Result<Array, JsValue> {
        let cursor = self.exec(query, bindings)?;
        let to_array = get(&cursor, "toArray")
            .dyn_into::<Function>()
            .map_err(|_| JsValue::from(js_sys::Error::new("sql cursor has no toArray()")))?;
        to_array.call0(&cursor)?.dyn_into::<Array>()
    }

    /// Runs `body` inside `transactionSync`: every statement commits together, or, when `body`
    /// returns `Err` (thrown into the transaction), none does.
    pub fn transaction<T: 'static>(
        &self,
        body: impl FnOnce() -> Result<T, JsValue> + 'static,
    ) -> Result<T, JsValue> {
        let result: Rc<RefCell<Option<T>>> = Rc::default();
        let slot = result.clone();
        let mut body = Some(body);
        let run = Closure::<dyn FnMut() -> Result<JsValue, JsValue>>::new(move || {
            let body = body
                .take()
                .ok_or_else(|| JsValue::from(js_sys::Error::new("transaction body ran twice")))?;
            *slot.borrow_mut() = Some(body()?);
            Ok(JsValue::UNDEFINED)
        });
        self.transaction_sync.call1(&self.storage, run.as_ref())?;
        let value = result.borrow_mut().take();
        value.ok_or_else(|| {
            JsValue::from(js_sys::Error::new("transactionSync did not run its body"))
        })
    }

    fn exec(&self, query: &str, bindings: &[JsValue]) -> Result<JsValue, JsValue> {
        let args = Array::new();
        args.push(&JsValue::from_str(query));
        for binding in bindings {
            args.push(binding);
        }
        self.exec.apply(&self.sql, &args)
    }
}

/// `obj[key]`, or `undefined` when it cannot be read.
pub fn get(obj: &JsValue, key: &str) -> JsValue {
    if !obj.is_object() && !obj.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}
