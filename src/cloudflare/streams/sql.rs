//! The Durable Object's `ctx.storage.sql`, reached duck-typed through js-sys: no binding crate
//! describes it, and all this module needs is `exec(query, ...bindings)` and the cursor's `raw()`.
//! Every statement is synchronous (SQLite runs in the object's thread), so a whole request's
//! writes happen inside one JS turn and commit together.

use js_sys::{Array, ArrayBuffer, Function, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

/// A value bound to a `?` placeholder.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// SQLite integers: every number stored here is below 2^53, so it survives the trip as f64.
    Int(u64),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// `ctx.storage.sql` and its `exec` method.
pub struct Sql {
    target: JsValue,
    exec: Function,
}

impl Sql {
    /// Takes `ctx.storage` (the object's `DurableObjectStorage`); fails when it has no SQL API
    /// (a Durable Object class without a `new_sqlite_classes` migration).
    pub fn from_storage(storage: &JsValue) -> Result<Sql, JsValue> {
        let target = Reflect::get(storage, &JsValue::from_str("sql"))?;
        let exec = Reflect::get(&target, &JsValue::from_str("exec"))?
            .dyn_into::<Function>()
            .map_err(|_| {
                JsValue::from_str("storage.sql.exec is missing: is the class SQLite-backed?")
            })?;
        Ok(Sql { target, exec })
    }

    /// Runs one statement and drops its result.
    pub fn run(&self, query: &str, params: &[Param<'_>]) -> Result<(), JsValue> {
        self.cursor(query, params).map(|_| ())
    }

    /// Runs one statement and returns its rows as arrays of column values.
    pub fn rows(&self, query: &str, params: &[Param<'_>]) -> Result<Vec<Array>, JsValue> {
        let cursor = self.cursor(query, params)?;
        let raw = call0(&cursor, "raw")?;
        let list = call0(&raw, "toArray")?;
        Ok(Array::from(&list).iter().map(|v| Array::from(&v)).collect())
    }

    fn cursor(&self, query: &str, params: &[Param<'_>]) -> Result<JsValue, JsValue> {
        let args = Array::new_with_length(0);
        args.push(&JsValue::from_str(query));
        for param in params {
            args.push(&to_js(*param));
        }
        self.exec.apply(&self.target, &args)
    }
}

fn call0(target: &JsValue, method: &str) -> Result<JsValue, JsValue> {
    Reflect::get(target, &JsValue::from_str(method))?
        .dyn_into::<Function>()
        .map_err(|_| JsValue::from_str("sql cursor method missing"))?
        .call0(target)
}

fn to_js(param: Param<'_>) -> JsValue {
    match param {
        Param::Int(n) => JsValue::from_f64(n as f64),
        Param::Text(s) => JsValue::from_str(s),
        // SQLite stores an ArrayBuffer as a BLOB.
        Param::Blob(bytes) => Uint8Array::from(bytes).buffer().into(),
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
