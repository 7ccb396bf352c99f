//! The one wrapper over a SQLite-backed Durable Object's storage: the `worker` crate's
//! `SqlStorage` (`ctx.storage.sql`) for statements, and `transactionSync`, which workers-rs does
//! not bind, through the raw storage object. Both Durable Object classes use it: `ChatSession`
//! (`super::store`) and `SessionStream` (`super::streams::store`).
//!
//! Result rows are read with one `cursor.raw().toArray()` and then by column, each column read
//! as the type the schema gives it: workers-rs's `SqlCursor::raw()` iterates with one JS call per
//! row and probes every value's type with several more, which made a 50-row stream read cost
//! ~1.6x the CPU of this (bench/worker-cpu.mjs).
//!
//! Every statement is synchronous (SQLite runs in the object's thread), so the writes of one
//! call happen inside one JS turn; `transaction` makes them commit together.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use worker::{SqlStorage, Storage};

/// A value bound to a `?` placeholder.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// SQLite integers: every number stored here is below 2^53, so it survives the trip as f64.
    Int(u64),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// One result row, its columns in the order the query names them.
pub type SqlRow = Array;

/// The SQL interface of one Durable Object's storage. Cloning shares the same JS objects.
#[derive(Clone)]
pub struct Sql {
    storage: JsValue,
    sql: SqlStorage,
    exec: Function,
    transaction_sync: Function,
    /// What the statements run through this wrapper cost SQLite (test builds only).
    #[cfg(feature = "test-hooks")]
    io: Rc<std::cell::Cell<SqlIo>>,
}

/// Statements run and rows SQLite read and wrote for them, as its cursors count them
/// (`rowsRead`, `rowsWritten`; an index probe or an upsert's conflict check counts as a read).
/// Test builds only: `GET /__test/stream-io/<name>` reports a stream object's, so a test can
/// show that the readers an append wakes do not each read its rows.
#[cfg(feature = "test-hooks")]
#[derive(Clone, Copy, Debug, Default)]
pub struct SqlIo {
    pub statements: u64,
    pub rows_read: u64,
    pub rows_written: u64,
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
        let sql = storage.sql();
        let exec = Reflect::get(sql.as_ref(), &"exec".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or("ctx.storage.sql.exec is missing")?;
        Ok(Self {
            storage: raw,
            sql,
            exec,
            transaction_sync,
            #[cfg(feature = "test-hooks")]
            io: Rc::default(),
        })
    }

    /// The counts so far (test builds only).
    #[cfg(feature = "test-hooks")]
    pub fn io(&self) -> SqlIo {
        self.io.get()
    }

    #[cfg(feature = "test-hooks")]
    fn count(&self, rows_read: f64, rows_written: f64) {
        let mut io = self.io.get();
        io.statements += 1;
        io.rows_read += rows_read.max(0.0) as u64;
        io.rows_written += rows_written.max(0.0) as u64;
        self.io.set(io);
    }

    /// Runs one statement (or several separated by `;`) and ignores its result rows.
    pub fn run(&self, query: &str, params: &[Param<'_>]) -> Result<(), JsValue> {
        let bindings: Vec<JsValue> = params.iter().map(|p| to_js(*p)).collect();
        let _cursor = self.sql.exec_raw(query, bindings).map_err(JsValue::from)?;
        #[cfg(feature = "test-hooks")]
        self.count(_cursor.rows_read() as f64, _cursor.rows_written() as f64);
        Ok(())
    }

    /// Runs one query and returns every result row (one `raw().toArray()`).
    pub fn rows(&self, query: &str, params: &[Param<'_>]) -> Result<Vec<SqlRow>, JsValue> {
        let args = Array::new();
        args.push(&JsValue::from_str(query));
        for param in params {
            args.push(&to_js(*param));
        }
        let cursor = self.exec.apply(self.sql.as_ref(), &args)?;
        let raw = call0(&cursor, "raw")?;
        let list = call0(&raw, "toArray")?;
        #[cfg(feature = "test-hooks")]
        {
            let number = |name: &str| {
                Reflect::get(&cursor, &name.into())
                    .ok()
                    .and_then(|v| v.as_f64())
            };
            self.count(
                number("rowsRead").unwrap_or(0.0),
                number("rowsWritten").unwrap_or(0.0),
            );
        }
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
}

/// A column read as a non-negative integer (0 for anything else).
pub fn int_at(row: &Array, i: u32) -> u64 {
    uint_at(row, i).unwrap_or(0)
}

/// A column read as a non-negative whole number, if it is one.
pub fn uint_at(row: &Array, i: u32) -> Option<u64> {
    row.get(i)
        .as_f64()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
        .map(|n| n as u64)
}

/// A column read as text (empty for anything else).
pub fn text_at(row: &Array, i: u32) -> String {
    opt_text_at(row, i).unwrap_or_default()
}

/// A column read as text, if it is text.
pub fn opt_text_at(row: &Array, i: u32) -> Option<String> {
    row.get(i).as_string()
}

/// A BLOB column (an ArrayBuffer) copied into Rust (text is taken as its UTF-8 bytes).
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

fn call0(target: &JsValue, method: &str) -> Result<JsValue, JsValue> {
    Reflect::get(target, &JsValue::from_str(method))?
        .dyn_into::<Function>()
        .map_err(|_| JsValue::from(js_sys::Error::new("sql cursor method missing")))?
        .call0(target)
}

fn to_js(param: Param<'_>) -> JsValue {
    match param {
        Param::Int(n) => JsValue::from_f64(n as f64),
        Param::Text(s) => JsValue::from_str(s),
        // SQLite stores an ArrayBuffer as a BLOB (what today's rows were written with).
        Param::Blob(bytes) => Uint8Array::from(bytes).buffer().into(),
    }
}
