//! An in-memory `SessionStorage`. **Not durable**: everything is lost with the process (or the
//! wasm instance). For tests, demos and single-instance development only.

use std::cell::{Cell, RefCell};
use turnkeep_core::hash::FixedHashMap;

use serde_json::Value;

use turnkeep_core::checks::{is_safe_id, safe_uint};
use turnkeep_core::protocol::Message;
use turnkeep_core::session::check_fence;
use turnkeep_ports::chat::ChatMemory;
use turnkeep_ports::session::SessionStorage;
use turnkeep_ports::{CancelToken, LocalFuture, PortError};

/// Snapshots keyed by `sessionId`, with compare-and-set on the stored `cursor`. Single-threaded
/// like wasm; every call completes in one poll, so compare and write are atomic by construction.
#[derive(Debug, Default)]
pub struct MemorySessionStorage {
    /// Each snapshot as saved, beside the cursor read from it when it was saved (so a save
    /// compares without parsing the stored snapshot again).
    records: RefCell<FixedHashMap<String, (u64, Value)>>,
}

impl MemorySessionStorage {
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes a session's record (the optional `delete` of the port); true if one existed.
    pub fn delete(&self, session_id: &str) -> bool {
        self.records.borrow_mut().remove(session_id).is_some()
    }

    /// Number of stored sessions.
    pub fn len(&self) -> usize {
        self.records.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.borrow().is_empty()
    }

    fn load_now(&self, session_id: &str) -> Option<Value> {
        self.records
            .borrow()
            .get(session_id)
            .map(|(_, snapshot)| snapshot.clone())
    }

    fn save_now(&self, snapshot: &Value, expected_cursor: Option<u64>) -> Result<bool, PortError> {
        let (session_id, cursor) = snapshot_key(snapshot)?;
        let mut records = self.records.borrow_mut();
        let stored_cursor = records.get(&session_id).map(|(stored, _)| *stored);
        // A record exists but the caller expected none, or the reverse: a conflict, never an
        // overwrite.
        let matches = stored_cursor == expected_cursor;
        if matches {
            records.insert(session_id, (cursor, snapshot.clone()));
        }
        Ok(matches)
    }
}

impl SessionStorage for MemorySessionStorage {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(std::future::ready(Ok(self.load_now(session_id))))
    }

    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected_cursor: Option<u64>,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(std::future::ready(self.save_now(snapshot, expected_cursor)))
    }
}

/// The record key and cursor of a snapshot (an object, or the same as JSON text).
fn snapshot_key(snapshot: &Value) -> Result<(String, u64), PortError> {
    let parsed;
    let object = match snapshot {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|_| PortError::new("session snapshot text is not JSON"))?;
            &parsed
        }
        other => other,
    };
    let session_id = object
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|id| is_safe_id(id))
        .ok_or_else(|| PortError::new("session snapshot has no valid sessionId"))?;
    let cursor = object
        .get("cursor")
        .and_then(safe_uint)
        .ok_or_else(|| PortError::new("session snapshot has no valid cursor"))?;
    Ok((session_id.to_owned(), cursor))
}

/// Messages kept in memory (a `ChatMemory`; **not durable**). Saving replaces them; loading
/// returns a copy. A fenced save under a lower fence than the last one is refused
/// (`core::session::check_fence`).
#[derive(Debug, Default)]
pub struct MemoryChatMemory {
    messages: RefCell<Vec<Message>>,
    fence: Cell<Option<u64>>,
}

impl MemoryChatMemory {
    pub fn new() -> Self {
        Self::default()
    }

    /// The saved messages (tests).
    pub fn messages(&self) -> Vec<Message> {
        self.messages.borrow().clone()
    }
}

impl ChatMemory for MemoryChatMemory {
    fn load<'a>(
        &'a self,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<Message>, PortError>> {
        let messages = self.messages.borrow().clone();
        Box::pin(async move { Ok(messages) })
    }

    fn save<'a>(
        &'a self,
        messages: &'a [Message],
        fence: Option<u64>,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>> {
        let kept = match check_fence(self.fence.get(), fence) {
            Ok(kept) => kept,
            Err(refused) => return Box::pin(async move { Err(PortError::new(refused)) }),
        };
        self.fence.set(kept);
        *self.messages.borrow_mut() = messages.to_vec();
        Box::pin(async { Ok(()) })
    }
}
