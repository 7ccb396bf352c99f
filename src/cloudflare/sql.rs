//! `ctx.storage.sql` and `ctx.storage.transactionSync` of a SQLite-backed Durable Object,
//! reached duck-typed through js-sys (no `worker` crate): the store hands over the JS
//! `ctx.storage` object and this wrapper calls its methods by name. Both Durable Object classes
//! use it: `ChatSession` (`super::store`) and `SessionStream` (`super::streams::store`).
//!
//! Every statement is synchronous (SQLite runs in the object's thread), so the writes of one
//! call happen inside one JS turn; `transaction` (or the JS shell's own `transactionSync`) makes
//! them commit together.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A value bound to a `?` placeholder.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// SQLite integers: every number stored here is below 2^53, so it survives the trip as f64.
    Int(u64),
    Text(&'a str),
    Blob(&'a [u8]),
}

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

    /// Runs one statement (or several separated by `;`) and ignores its result rows.
    pub fn run(&self, query: &str, params: &[Param<'_>]) -> Result<(), JsValue> {
        self.exec(query, params).map(|_| ())
    }

    /// Runs one query and returns every result row as an array of column values, in the order
    /// the query names them.
    pub fn rows(&self, query: &str, params: &[Param<'_>]) -> Result<Vec<Array>, JsValue> {
        let cursor = self.exec(query, params)?;
        let raw = call0(&cursor, "raw")?;
        let list = call0(&raw, "toArray")?;
        Ok(Array::from(&list).iter().map(|v| Array::from(&v)).collect())
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

    fn exec(&self, query: &str, params: &[Param<'_>]) -> Result<JsValue, JsValue> {
        let args = Array::new();
        args.push(&JsValue::from_str(query));
        for param in params {
            args.push(&to_js(*param));
        }
        self.exec.apply(&self.sql, &args)
    }
}

/// A column read as a non-negative integer (0 for anything else).
pub fn int_at(row: &Array, i: u32) -> u64 {
    row.get(i)
        .as_f64()
        .filter(|n| *n >= 0.0)
        .map_or(0, |n| n as u64)
}

/// A column read as text (empty for anything else).
pub fn text_at(row: &Array, i: u32) -> String {
    row.get(i).as_string().unwrap_or_default()
}

/// A BLOB column (an ArrayBuffer) copied into Rust.
pub fn blob_at(row: &Array, i: u32) -> Vec<u8> {
    let value = row.get(i);
    match value.dyn_ref::<ArrayBuffer>() {
        Some(buffer) => Uint8Array::new(buffer).to_vec(),
        None => value
            .as_string()
            .map(String::into_bytes)
            .unwrap_or_default(),
    }
}

fn to_js(param: Param<'_>) -> JsValue {
    match param {
        Param::Int(n) => JsValue::from_f64(n as f64),
        Param::Text(s) => JsValue::from_str(s),
        // SQLite stores an ArrayBuffer as a BLOB.
        Param::Blob(bytes) => Uint8Array::from(bytes).buffer().into(),
    }
}

fn call0(target: &JsValue, method: &str) -> Result<JsValue, JsValue> {
    get(target, method)
        .dyn_into::<Function>()
        .map_err(|_| JsValue::from(js_sys::Error::new("sql cursor method missing")))?
        .call0(target)
}

/// `obj[key]`, or `undefined` when it cannot be read.
fn get(obj: &JsValue, key: &str) -> JsValue {
    if !obj.is_object() && !obj.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}
