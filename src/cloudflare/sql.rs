//! The one wrapper over a SQLite-backed Durable Object's storage: statements through the
//! `worker` crate's `SqlStorage` (`ctx.storage.sql`), and `transactionSync`, which workers-rs
//! does not bind, through the raw storage object. Both Durable Object classes use it:
//! `ChatSession` (`super::store`) and `SessionStream` (`super::streams::store`).
//!
//! Every statement is synchronous (SQLite runs in the object's thread), so the writes of one
//! call happen inside one JS turn; `transaction` makes them commit together.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use worker::{SqlStorage, SqlStorageValue, Storage};

/// A value bound to a `?` placeholder.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// SQLite integers: every number stored here is below 2^53, so it survives the trip as f64.
    Int(u64),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// One result row, its columns in the order the query names them.
pub type SqlRow = Vec<SqlStorageValue>;

/// The SQL interface of one Durable Object's storage. Cloning shares the same JS objects.
#[derive(Clone)]
pub struct Sql {
    storage: JsValue,
    sql: SqlStorage,
    transaction_sync: Function,
}

impl Sql {
    /// Wraps the object's storage. The error says what is missing (for the developer wiring the
    /// class: a class missing from `new_sqlite_classes` has no SQL interface).
    pub fn from_storage(storage: &Storage) -> Result<Self, String> {
        let raw: JsValue = AsRef::<JsValue>::as_ref(storage.as_raw()).clone();
        let has_sql = Reflect::get(&raw, &"sql".into()).is_ok_and(|v| v.is_object());
        if !has_sql {
            return Err(
                "ctx.storage.sql is missing: declare the class in a `new_sqlite_classes` migration"
                    .into(),
            );
        }
        let transaction_sync = Reflect::get(&raw, &"transactionSync".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or("ctx.storage.transactionSync is missing")?;
        Ok(Self {
            storage: raw,
            sql: storage.sql(),
            transaction_sync,
        })
    }

    /// Runs one statement (or several separated by `;`) and ignores its result rows.
    pub fn run(&self, query: &str, params: &[Param<'_>]) -> Result<(), JsValue> {
        self.exec(query, params).map(|_| ())
    }

    /// Runs one query and returns every result row.
    pub fn rows(&self, query: &str, params: &[Param<'_>]) -> Result<Vec<SqlRow>, JsValue> {
        self.exec(query, params)?
            .raw()
            .collect::<worker::Result<Vec<_>>>()
            .map_err(JsValue::from)
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

    fn exec(&self, query: &str, params: &[Param<'_>]) -> Result<worker::SqlCursor, JsValue> {
        let bindings: Vec<JsValue> = params.iter().map(|p| to_js(*p)).collect();
        self.sql.exec_raw(query, bindings).map_err(JsValue::from)
    }
}

/// A column read as a non-negative integer (0 for anything else).
pub fn int_at(row: &[SqlStorageValue], i: usize) -> u64 {
    match row.get(i) {
        Some(SqlStorageValue::Integer(n)) if *n >= 0 => *n as u64,
        Some(SqlStorageValue::Float(n)) if *n >= 0.0 => *n as u64,
        _ => 0,
    }
}

/// A column read as a non-negative whole number, if it is one.
pub fn uint_at(row: &[SqlStorageValue], i: usize) -> Option<u64> {
    match row.get(i) {
        Some(SqlStorageValue::Integer(n)) if *n >= 0 => Some(*n as u64),
        _ => None,
    }
}

/// A column read as text (empty for anything else).
pub fn text_at(row: &[SqlStorageValue], i: usize) -> String {
    match row.get(i) {
        Some(SqlStorageValue::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// A column read as text, if it is text.
pub fn opt_text_at(row: &[SqlStorageValue], i: usize) -> Option<String> {
    match row.get(i) {
        Some(SqlStorageValue::String(s)) => Some(s.clone()),
        _ => None,
    }
}

/// A BLOB column (text is taken as its UTF-8 bytes).
pub fn blob_at(row: &[SqlStorageValue], i: usize) -> Vec<u8> {
    match row.get(i) {
        Some(SqlStorageValue::Blob(bytes)) => bytes.clone(),
        Some(SqlStorageValue::String(s)) => s.clone().into_bytes(),
        _ => Vec::new(),
    }
}

fn to_js(param: Param<'_>) -> JsValue {
    match param {
        Param::Int(n) => JsValue::from_f64(n as f64),
        Param::Text(s) => JsValue::from_str(s),
        // SQLite stores an ArrayBuffer as a BLOB (what today's rows were written with).
        Param::Blob(bytes) => Uint8Array::from(bytes).buffer().into(),
    }
}
