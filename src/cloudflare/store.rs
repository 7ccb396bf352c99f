//! `ChatSessionStore`: what the `ChatSession` Durable Object does with its SQLite storage.
//! The JS class shell (`js/cloudflare/worker.mjs`) builds one per object from `ctx.storage`
//! and forwards its RPC methods here.
//!
//! - The session envelope: `saveSession(snapshot, expectedCursor)` is compare-and-set on the
//!   stored cursor inside one `transactionSync`; `false` on conflict, never an overwrite.
//! - The canonical messages (ChatMemory): validated with the wire decoder, one message per
//!   position, each split over rows of at most `DO_ROW_BYTES_MAX` bytes; a save rewrites only
//!   the positions whose text changed.
//!
//! Every method is synchronous: a Durable Object runs one at a time, and nothing here awaits,
//! so no other request can interleave between the compare and the write.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::rows::{decide_save, join_rows, plan_messages, split_rows, Row, SaveDecision, Stored};
use super::sql::{get, Sql};
use crate::core::checks::{is_safe_id, safe_uint};
use crate::core::limits::{
    DO_MESSAGES_JSON_BYTES_MAX, DO_ROW_BYTES_MAX, DO_SESSION_JSON_BYTES_MAX,
};
use crate::core::protocol::message::{decode_messages, message_to_value};

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS turnkeep_session (session_id TEXT PRIMARY KEY, cursor INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS turnkeep_session_row (session_id TEXT NOT NULL, part INTEGER NOT NULL, \
     body TEXT NOT NULL, PRIMARY KEY (session_id, part))",
    "CREATE TABLE IF NOT EXISTS turnkeep_message_row (position INTEGER NOT NULL, part INTEGER NOT NULL, \
     body TEXT NOT NULL, PRIMARY KEY (position, part))",
];

/// The storage of one `ChatSession` Durable Object.
#[wasm_bindgen(js_name = ChatSessionStore)]
pub struct ChatSessionStore {
    sql: Sql,
}

#[wasm_bindgen(js_class = ChatSessionStore)]
impl ChatSessionStore {
    /// `new ChatSessionStore(ctx.storage)`: creates the tables when missing. Throws when the
    /// storage has no SQL interface (the class is missing from `new_sqlite_classes`).
    #[wasm_bindgen(constructor)]
    pub fn new(storage: JsValue) -> Result<ChatSessionStore, JsValue> {
        let sql = Sql::from_storage(&storage).map_err(|m| error("new ChatSessionStore", &m))?;
        for statement in SCHEMA {
            sql.run(statement, &[])?;
        }
        Ok(Self { sql })
    }

    /// `loadSession(sessionId)`: the stored envelope as JSON text, or `undefined` when absent.
    #[wasm_bindgen(js_name = loadSession)]
    pub fn load_session(&self, session_id: JsValue) -> Result<JsValue, JsValue> {
        let id = safe_id_arg("loadSession", &session_id)?;
        match session_text(&self.sql, &id)? {
            Some(text) => Ok(JsValue::from_str(&text)),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// `saveSession(snapshot, expectedCursor)`: compare-and-set. `expectedCursor`
    /// `undefined`/`null` creates only when absent; a number writes only over that stored
    /// cursor. Returns `false` on conflict. Throws for a snapshot without a SafeId `sessionId`
    /// and a safe-integer `cursor`, or larger than `DO_SESSION_JSON_BYTES_MAX`.
    #[wasm_bindgen(js_name = saveSession)]
    pub fn save_session(
        &self,
        snapshot: JsValue,
        expected_cursor: JsValue,
    ) -> Result<bool, JsValue> {
        let (id, cursor, text) = read_snapshot(&snapshot).map_err(|m| error("saveSession", &m))?;
        let expected =
            read_expected_cursor(&expected_cursor).map_err(|m| error("saveSession", &m))?;
        let sql = self.sql.clone();
        self.sql.transaction(move || {
            let stored = stored_cursor(&sql, &id)?;
            if decide_save(stored, expected) == SaveDecision::Conflict {
                return Ok(false);
            }
            let id_value = JsValue::from_str(&id);
            sql.run(
                "INSERT INTO turnkeep_session (session_id, cursor) VALUES (?, ?) \
                 ON CONFLICT (session_id) DO UPDATE SET cursor = excluded.cursor",
                &[id_value.clone(), JsValue::from_f64(cursor as f64)],
            )?;
            sql.run(
                "DELETE FROM turnkeep_session_row WHERE session_id = ?",
                std::slice::from_ref(&id_value),
            )?;
            for (part, body) in split_rows(&text, DO_ROW_BYTES_MAX).into_iter().enumerate() {
                sql.run(
                    "INSERT INTO turnkeep_session_row (session_id, part, body) VALUES (?, ?, ?)",
                    &[
                        id_value.clone(),
                        JsValue::from_f64(part as f64),
                        JsValue::from_str(body),
                    ],
                )?;
            }
            Ok(true)
        })
    }

    /// `deleteSession(sessionId)`: removes the envelope; `true` when one existed.
    #[wasm_bindgen(js_name = deleteSession)]
    pub fn delete_session(&self, session_id: JsValue) -> Result<bool, JsValue> {
        let id = safe_id_arg("deleteSession", &session_id)?;
        let sql = self.sql.clone();
        self.sql.transaction(move || {
            let existed = stored_cursor(&sql, &id)? != Stored::Absent;
            let id_value = JsValue::from_str(&id);
            sql.run(
                "DELETE FROM turnkeep_session WHERE session_id = ?",
                std::slice::from_ref(&id_value),
            )?;
            sql.run(
                "DELETE FROM turnkeep_session_row WHERE session_id = ?",
                &[id_value],
            )?;
            Ok(existed)
        })
    }

    /// `loadMessages()`: the saved canonical messages (an array; empty when none were saved).
    #[wasm_bindgen(js_name = loadMessages)]
    pub fn load_messages(&self) -> Result<JsValue, JsValue> {
        let texts = message_texts(&self.sql)?;
        js_sys::JSON::parse(&format!("[{}]", texts.join(",")))
    }

    /// `saveMessages(messages)`: replaces the saved conversation. Throws (storing nothing) when
    /// `messages` is not a valid message array or its JSON exceeds `DO_MESSAGES_JSON_BYTES_MAX`.
    #[wasm_bindgen(js_name = saveMessages)]
    pub fn save_messages(&self, messages: JsValue) -> Result<(), JsValue> {
        let texts = read_messages(&messages).map_err(|m| error("saveMessages", &m))?;
        let sql = self.sql.clone();
        self.sql.transaction(move || {
            let plan = plan_messages(&message_texts(&sql)?, &texts);
            for position in plan.rewrite {
                let at = JsValue::from_f64(position as f64);
                sql.run(
                    "DELETE FROM turnkeep_message_row WHERE position = ?",
                    std::slice::from_ref(&at),
                )?;
                for (part, body) in split_rows(&texts[position], DO_ROW_BYTES_MAX)
                    .into_iter()
                    .enumerate()
                {
                    sql.run(
                        "INSERT INTO turnkeep_message_row (position, part, body) VALUES (?, ?, ?)",
                        &[
                            at.clone(),
                            JsValue::from_f64(part as f64),
                            JsValue::from_str(body),
                        ],
                    )?;
                }
            }
            if let Some(from) = plan.truncate_from {
                sql.run(
                    "DELETE FROM turnkeep_message_row WHERE position >= ?",
                    &[JsValue::from_f64(from as f64)],
                )?;
            }
            Ok(())
        })
    }

    /// `stats()`: `{ sessionRows, messageRows, rowBytesMax }` — how the data is laid out in
    /// rows (operators and tests check that no row nears the Durable Object value limit).
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let count = |table: &str| -> Result<(f64, f64), JsValue> {
            let rows = self.sql.rows(
                &format!("SELECT COUNT(*) AS n, COALESCE(MAX(LENGTH(CAST(body AS BLOB))), 0) AS bytes FROM {table}"),
                &[],
            )?;
            let row = rows.get(0);
            Ok((
                get(&row, "n").as_f64().unwrap_or(0.0),
                get(&row, "bytes").as_f64().unwrap_or(0.0),
            ))
        };
        let (session_rows, session_bytes) = count("turnkeep_session_row")?;
        let (message_rows, message_bytes) = count("turnkeep_message_row")?;
        let out = js_sys::Object::new();
        js_sys::Reflect::set(&out, &"sessionRows".into(), &session_rows.into())?;
        js_sys::Reflect::set(&out, &"messageRows".into(), &message_rows.into())?;
        js_sys::Reflect::set(
            &out,
            &"rowBytesMax".into(),
            &session_bytes.max(message_bytes).into(),
        )?;
        Ok(out.into())
    }
}

/// A JS `Error` naming the method, for the developer (never sent to a chat client as is).
fn error(method: &str, detail: &str) -> JsValue {
    js_sys::Error::new(&format!("ChatSessionStore.{method}: {detail}")).into()
}

fn safe_id_arg(method: &str, value: &JsValue) -> Result<String, JsValue> {
    value
        .as_string()
        .filter(|s| is_safe_id(s))
        .ok_or_else(|| error(method, "sessionId must be a SafeId"))
}

/// The stored cursor of `id`, read in the same transaction as the write that depends on it.
fn stored_cursor(sql: &Sql, id: &str) -> Result<Stored, JsValue> {
    let rows = sql.rows(
        "SELECT cursor FROM turnkeep_session WHERE session_id = ?",
        &[JsValue::from_str(id)],
    )?;
    if rows.length() == 0 {
        return Ok(Stored::Absent);
    }
    let cursor = get(&rows.get(0), "cursor")
        .as_f64()
        .and_then(|n| safe_uint(&Value::from(n)));
    Ok(cursor.map_or(Stored::Unreadable, Stored::Cursor))
}

fn session_text(sql: &Sql, id: &str) -> Result<Option<String>, JsValue> {
    let rows = sql.rows(
        "SELECT part, body FROM turnkeep_session_row WHERE session_id = ? ORDER BY part",
        &[JsValue::from_str(id)],
    )?;
    let rows = rows
        .iter()
        .map(|r| read_row(&r, 0.0))
        .collect::<Result<Vec<_>, _>>()?;
    let mut texts = join_rows(rows).map_err(|e| error("loadSession", &e.to_string()))?;
    Ok(texts.pop())
}

fn message_texts(sql: &Sql) -> Result<Vec<String>, JsValue> {
    let rows = sql.rows(
        "SELECT position, part, body FROM turnkeep_message_row ORDER BY position, part",
        &[],
    )?;
    let rows = rows
        .iter()
        .map(|r| read_row(&r, -1.0))
        .collect::<Result<Vec<_>, _>>()?;
    join_rows(rows).map_err(|e| error("loadMessages", &e.to_string()))
}

/// One SQL row as a [`Row`]; `position` is taken from the row unless `fixed_position >= 0`.
fn read_row(row: &JsValue, fixed_position: f64) -> Result<Row, JsValue> {
    let number = |key: &str| {
        get(row, key)
            .as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0)
    };
    let position = if fixed_position >= 0.0 {
        Some(fixed_position)
    } else {
        number("position")
    };
    match (position, number("part"), get(row, "body").as_string()) {
        (Some(position), Some(part), Some(body)) => Ok(Row {
            position: position as u64,
            part: part as u64,
            body,
        }),
        _ => Err(error(
            "read",
            "a stored row is damaged (position, part or body missing)",
        )),
    }
}

/// A value's JSON text: strings are taken as JSON text, anything else goes through `JSON.stringify`.
fn json_text(value: &JsValue) -> Result<String, String> {
    if let Some(text) = value.as_string() {
        return Ok(text);
    }
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| "value has no JSON form".to_string())
}

/// The snapshot's `sessionId`, `cursor` and compact JSON text.
fn read_snapshot(snapshot: &JsValue) -> Result<(String, u64, String), String> {
    let text = json_text(snapshot)?;
    if text.len() > DO_SESSION_JSON_BYTES_MAX {
        return Err(format!(
            "snapshot JSON is larger than {DO_SESSION_JSON_BYTES_MAX} bytes"
        ));
    }
    let value: Value =
        serde_json::from_str(&text).map_err(|_| "snapshot is not valid JSON".to_string())?;
    let id = value
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|s| is_safe_id(s))
        .ok_or("snapshot.sessionId must be a SafeId")?
        .to_string();
    let cursor = value
        .get("cursor")
        .and_then(safe_uint)
        .ok_or("snapshot.cursor must be a non-negative safe integer")?;
    Ok((id, cursor, value.to_string()))
}

fn read_expected_cursor(value: &JsValue) -> Result<Option<u64>, String> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .as_f64()
        .and_then(|n| safe_uint(&Value::from(n)))
        .map(Some)
        .ok_or_else(|| {
            "expectedCursor must be undefined or a non-negative safe integer".to_string()
        })
}

/// Validated messages, one canonical JSON text each.
fn read_messages(messages: &JsValue) -> Result<Vec<String>, String> {
    let text = json_text(messages)?;
    if text.len() > DO_MESSAGES_JSON_BYTES_MAX {
        return Err(format!(
            "messages JSON is larger than {DO_MESSAGES_JSON_BYTES_MAX} bytes"
        ));
    }
    let value: Value =
        serde_json::from_str(&text).map_err(|_| "messages is not valid JSON".to_string())?;
    let decoded = decode_messages(&value).map_err(|e| e.to_string())?;
    Ok(decoded
        .iter()
        .map(|m| message_to_value(m).to_string())
        .collect())
}
