//! Sessions written by a host's own model stream (`toChatResponse`: authorized, and fenced by a
//! producer when the host gives one), host-independent, and reading a
//! whole log into the one projection (`resolveChatSnapshot` and the native batch share it).
//!
//! [`open`]: the new messages' text echoes, then one native batch with the complete state (the
//! log's projection with the new messages reconciled by id), all acknowledged before it returns.
//! [`pipe`]: then the source's chunks, sanitized, read only as fast as the log takes them. Both
//! send through the one [`LogSender`]; with a producer, every chunk is its own batch and its seq
//! is its index in the turn across echoes, batch and source chunks.

use std::rc::Rc;

use serde_json::Value;

use super::race::{join, race, Either};
use super::send::{LogSender, Producer, SendEnd, SendOptions};
use turnkeep_core::limits::{LOG_SOURCE_CHUNKS_AHEAD_MAX, RESOLVE_READS_MAX};
use turnkeep_core::projection::native::{echo_chunks, native_batch, sanitize_chunk, NewMessage};
use turnkeep_core::projection::Projection;
use turnkeep_ports::chat::Sleep;
use turnkeep_ports::log::{LogError, ReadFrom, SessionLog};
use turnkeep_ports::{CancelToken, LocalFuture, PortError};

/// The host's model stream, one chunk at a time.
pub trait ChunkSource {
    /// The next chunk; `None` at the end.
    fn next(&self) -> LocalFuture<'_, Option<Result<Value, PortError>>>;
    /// Nothing more will be read (the log refused this writer): let the source stop.
    fn stop(&self) {}
}

/// Why writing a session response failed.
#[derive(Clone, Debug)]
pub enum ResponseError {
    /// The log refused or kept failing (`ChatProducerError`, by `LogError::kind`).
    Log(LogError),
    /// The source threw; the chunks it yielded before were stored.
    Source(PortError),
    /// The source yielded chunk `index` (0-based), which is not a chunk; nothing after it was
    /// read. `rule` says why.
    InvalidChunk { index: u64, rule: &'static str },
}

impl ResponseError {
    fn from_end(end: SendEnd) -> Option<Self> {
        Some(ResponseError::Log(match end {
            SendEnd::Drained => return None,
            SendEnd::Fenced { current_epoch } => LogError::StaleEpoch { current_epoch },
            SendEnd::Failed(error) => error,
            SendEnd::Overflow => LogError::Failed(PortError::new("the log fell too far behind")),
            SendEnd::Lapsed => LogError::Failed(PortError::new("the writer's time ran out")),
        }))
    }
}

/// Writes one session response to `log`.
pub struct ResponseWriter {
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn Sleep>,
    producer: Option<Producer>,
}

impl ResponseWriter {
    pub fn new(log: Rc<dyn SessionLog>, sleep: Rc<dyn Sleep>, producer: Option<Producer>) -> Self {
        Self {
            log,
            sleep,
            producer,
        }
    }

    fn sender(&self, first_seq: u64) -> LogSender {
        LogSender::new(
            self.log.clone(),
            self.sleep.clone(),
            SendOptions {
                producer: self.producer.clone(),
                merge_deltas: false,
                deadline: None,
                first_seq,
            },
        )
    }

    /// Echoes `new` and writes the native batch; returns the seq the source's first chunk gets.
    pub async fn open(
        &self,
        new: &[NewMessage],
        now_ms: u64,
        cancel: &CancelToken,
    ) -> Result<u64, ResponseError> {
        let (projection, _) = read_projection(self.log.as_ref(), cancel)
            .await
            .map_err(ResponseError::Log)?;
        let mut chunks: Vec<Value> = new.iter().flat_map(|m| echo_chunks(m, now_ms)).collect();
        chunks.push(native_batch(projection.native_messages(), new, now_ms));
        let sender = self.sender(0);
        sender.push(chunks);
        sender.close();
        let end = sender.pump().await;
        match ResponseError::from_end(end) {
            Some(error) => Err(error),
            None => Ok(sender.next_seq()),
        }
    }

    /// Appends the source's chunks from seq `first_seq` until the source ends; returns how many.
    /// Chunks yielded before a source failure are still stored.
    pub async fn pipe(
        &self,
        source: &dyn ChunkSource,
        first_seq: u64,
    ) -> Result<u64, ResponseError> {
        let sender = self.sender(first_seq);
        let feed = async {
            let mut index = 0u64;
            loop {
                sender.room(LOG_SOURCE_CHUNKS_AHEAD_MAX).await;
                let next = match race(source.next(), sender.finished()).await {
                    Either::Left(next) => next,
                    Either::Right(()) => None, // the log gave up on this writer
                };
                if sender.ended().is_some() {
                    source.stop();
                    return Ok(index);
                }
                let chunk = match next {
                    None => break Ok(index),
                    Some(Err(error)) => break Err(ResponseError::Source(error)),
                    Some(Ok(chunk)) => chunk,
                };
                match sanitize_chunk(chunk) {
                    Ok(chunk) => sender.push(vec![chunk]),
                    Err(rule) => {
                        source.stop();
                        break Err(ResponseError::InvalidChunk { index, rule });
                    }
                }
                index += 1;
            }
        };
        let fed = async {
            let fed = feed.await;
            sender.close();
            fed
        };
        let (fed, end) = join(fed, sender.pump()).await;
        match ResponseError::from_end(end) {
            Some(error) => Err(error),
            None => fed,
        }
    }
}

/// Reads `log` from its start into the one projection; also returns the offset after the last
/// chunk (`None` for an empty log).
pub async fn read_projection(
    log: &dyn SessionLog,
    cancel: &CancelToken,
) -> Result<(Projection, Option<String>), LogError> {
    let mut projection = Projection::new();
    let offset = read_all(log, cancel, &mut |chunks| projection.feed_all(chunks)).await?;
    Ok((projection, offset))
}

/// Hands every chunk of `log` to `take`, batch by batch from its start to its tail; returns the
/// offset after the last one (`None` for an empty log).
pub async fn read_all(
    log: &dyn SessionLog,
    cancel: &CancelToken,
    take: &mut dyn FnMut(&[Value]),
) -> Result<Option<String>, LogError> {
    let mut offset: Option<String> = None;
    for _ in 0..RESOLVE_READS_MAX {
        let from = offset.as_deref().map_or(ReadFrom::Start, ReadFrom::After);
        let read = log.read(from, 0, cancel).await?;
        take(&read.chunks);
        let moved = read.offset.is_some() && read.offset != offset;
        if read.offset.is_some() {
            offset = read.offset;
        }
        if read.up_to_date || read.chunks.is_empty() || !moved {
            return Ok(offset);
        }
    }
    Err(LogError::Failed(PortError::new(
        "the log is longer than this reader reads at once",
    )))
}
