//! A log kept by a generic store (in memory, Redis, Postgres): numbered items plus one head
//! record, changed together by one conditional commit. This module decides appends for such a
//! store with the same producer rules the Durable Object server applies ([`super::producer`]), so
//! every session-log adapter fences writers the same way.
//!
//! - Positions count items from 0; the offset after `n` items is `Offset { read_seq: 0,
//!   byte_offset: n }` printed in the usual fixed width, so offsets sort like positions.
//! - The head's `version` increases with every commit; a store commits only if the version it
//!   holds is the one the decision was made on (compare-and-set), so two writers never both win.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::offset::Offset;
use super::producer::{
    check_producer_capacity, validate_producer, ProducerDecision, ProducerHeaders, ProducerState,
};
use crate::checks::safe_uint;
use crate::limits;

/// The head record of an item log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogHead {
    /// Incremented by every commit; compare-and-set key.
    pub version: u64,
    /// Items stored.
    pub length: u64,
    /// Fencing state per producer id.
    pub producers: BTreeMap<String, ProducerState>,
}

/// What an append may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemAppendDecision {
    /// Store the items but the first `skip` (item seqs: those are stored already, see
    /// `super::producer`) at `head.length..`, then commit `next` (version + 1).
    Append {
        next: LogHead,
        skip: u64,
    },
    /// This producer batch was stored before; nothing to do.
    Duplicate,
    StaleEpoch {
        current_epoch: u64,
    },
    SequenceGap {
        expected: u64,
        received: u64,
    },
    /// A producer's new epoch must start at seq 0.
    NewEpochSeqNotZero,
    /// Too many producer ids on this log.
    ProducerTableFull,
    /// Nothing to append, or the log would pass its item bound.
    Refused(&'static str),
}

/// Decides appending `items` items to the log at `head`, as producer `producer` if given (with
/// item seqs, `producer.items` must be `items`).
pub fn decide_item_append(
    head: &LogHead,
    items: u64,
    producer: Option<&ProducerHeaders>,
) -> ItemAppendDecision {
    if items == 0 {
        return ItemAppendDecision::Refused("an append needs at least one item");
    }
    let Some(length) = head
        .length
        .checked_add(items)
        .filter(|n| *n <= limits::LOG_ITEMS_MAX)
    else {
        return ItemAppendDecision::Refused("the log is full");
    };
    let mut next = LogHead {
        version: head.version + 1,
        length,
        producers: head.producers.clone(),
    };
    let mut skip = 0;
    if let Some(p) = producer {
        if p.items.is_some_and(|n| n != items) {
            return ItemAppendDecision::Refused("Producer-Seq-Count is not the count of the items");
        }
        let known = head.producers.get(&p.id);
        if check_producer_capacity(head.producers.len(), known.is_some()).is_err() {
            return ItemAppendDecision::ProducerTableFull;
        }
        match validate_producer(known, p) {
            ProducerDecision::Accepted {
                next: state,
                skip: stored,
            } => {
                next.producers.insert(p.id.clone(), state);
                next.length -= stored;
                skip = stored;
            }
            ProducerDecision::Duplicate { .. } => return ItemAppendDecision::Duplicate,
            ProducerDecision::StaleEpoch { current_epoch } => {
                return ItemAppendDecision::StaleEpoch { current_epoch }
            }
            ProducerDecision::NewEpochSeqNotZero { .. } => {
                return ItemAppendDecision::NewEpochSeqNotZero
            }
            ProducerDecision::SequenceGap { expected, received } => {
                return ItemAppendDecision::SequenceGap { expected, received }
            }
        }
    }
    ItemAppendDecision::Append { next, skip }
}

/// An invariant an item-log commit or read broke: a programmer error (the decision, or the
/// code that applies it), or a store that lost a commit. The append is refused, never committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogViolation {
    /// The next head is not one commit past the head it was decided on: version + 1 and
    /// length + the items appended.
    HeadNotAdvanced {
        from: (u64, u64),
        to: (u64, u64),
        items: u64,
    },
    /// A producer's state moves other than by the producer rules: the appending producer's
    /// seq is not the one it sent, one past its last (same epoch) or 0 (a new epoch); or another
    /// producer's state changed.
    ProducerMoved { id: String },
    /// The stored head went back behind a version this log saw (a commit was lost).
    HeadWentBack { seen: u64, loaded: u64 },
}

impl std::fmt::Display for LogViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("log append refused, an invariant broke: ")?;
        match self {
            Self::HeadNotAdvanced { from, to, items } => write!(
                f,
                "the head moves from (version, length) {from:?} to {to:?} for {items} items"
            ),
            Self::ProducerMoved { id } => {
                write!(
                    f,
                    "producer {id:?}'s state moves against the producer rules"
                )
            }
            Self::HeadWentBack { seen, loaded } => {
                write!(
                    f,
                    "the stored head went back from version {seen} to {loaded}"
                )
            }
        }
    }
}

impl std::error::Error for LogViolation {}

/// Checks a commit before it is sent: `next` is one commit past `head` for the `items` items it
/// stores, and the producer state moves only as `producer`'s accepted append moves it (every
/// other producer's state is kept; the seq per producer advances by exactly one — by one per
/// stored item with item seqs — or starts at 0 in a new epoch, and ends at the request's last).
pub fn check_item_commit(
    head: &LogHead,
    items: u64,
    producer: Option<&ProducerHeaders>,
    next: &LogHead,
) -> Result<(), LogViolation> {
    let advanced = head.version.checked_add(1) == Some(next.version)
        && head.length.checked_add(items) == Some(next.length);
    if !advanced {
        return Err(LogViolation::HeadNotAdvanced {
            from: (head.version, head.length),
            to: (next.version, next.length),
            items,
        });
    }
    let moved = |id: &str| LogViolation::ProducerMoved { id: id.to_owned() };
    let ids = head.producers.keys().chain(next.producers.keys());
    for id in ids.filter(|id| producer.is_none_or(|p| p.id != **id)) {
        if head.producers.get(id) != next.producers.get(id) {
            return Err(moved(id));
        }
    }
    let Some(p) = producer else {
        return Ok(());
    };
    let Some(state) = next.producers.get(&p.id) else {
        return Err(moved(&p.id));
    };
    let step = if p.items.is_some() { items } else { 1 };
    let follows = match head.producers.get(&p.id) {
        Some(prev) if prev.epoch == state.epoch => {
            prev.last_seq.checked_add(step) == Some(state.last_seq)
        }
        Some(prev) => state.epoch > prev.epoch && p.seq == 0,
        None => p.seq == 0,
    };
    if follows && state.epoch == p.epoch && state.last_seq == p.last_seq() {
        Ok(())
    } else {
        Err(moved(&p.id))
    }
}

/// Checks a head read from the store against `seen`, the highest version this log read or
/// committed before (no head: version 0), and returns the new highest.
pub fn check_head_read(
    seen: Option<u64>,
    head: Option<&LogHead>,
) -> Result<Option<u64>, LogViolation> {
    let loaded = head.map_or(0, |h| h.version);
    match seen {
        Some(seen) if loaded < seen => Err(LogViolation::HeadWentBack { seen, loaded }),
        _ => Ok(Some(loaded)),
    }
}

/// The offset after `position` items.
pub fn position_offset(position: u64) -> String {
    Offset {
        read_seq: 0,
        byte_offset: position,
    }
    .to_string()
}

/// The item position an offset this log minted names; `None` for anything else.
pub fn offset_position(offset: &str) -> Option<u64> {
    Offset::parse(offset)
        .ok()
        .filter(|o| o.read_seq == 0)
        .map(|o| o.byte_offset)
}

impl LogHead {
    /// `{"version":v,"length":n,"producers":{"id":[epoch,lastSeq],...}}`: what a store keeps.
    pub fn to_json(&self) -> String {
        let producers: Map<String, Value> = self
            .producers
            .iter()
            .map(|(id, s)| (id.clone(), json!([s.epoch, s.last_seq])))
            .collect();
        json!({ "version": self.version, "length": self.length, "producers": producers })
            .to_string()
    }

    /// Reads what [`LogHead::to_json`] wrote; `None` when it is not that shape.
    pub fn from_json(value: &Value) -> Option<LogHead> {
        let version = value.get("version").and_then(safe_uint)?;
        let length = value.get("length").and_then(safe_uint)?;
        let mut producers = BTreeMap::new();
        for (id, state) in value.get("producers")?.as_object()? {
            let pair = state.as_array().filter(|a| a.len() == 2)?;
            producers.insert(
                id.clone(),
                ProducerState {
                    epoch: safe_uint(&pair[0])?,
                    last_seq: safe_uint(&pair[1])?,
                },
            );
        }
        Some(LogHead {
            version,
            length,
            producers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(id: &str, epoch: u64, seq: u64) -> ProducerHeaders {
        ProducerHeaders {
            id: id.into(),
            epoch,
            seq,
            items: None,
        }
    }

    /// Applies a decision the way a store commits one.
    fn apply(head: &LogHead, decision: &ItemAppendDecision) -> LogHead {
        match decision {
            ItemAppendDecision::Append { next, .. } => next.clone(),
            _ => head.clone(),
        }
    }

    #[test]
    fn fencing_follows_the_producer_rules() {
        use ItemAppendDecision as D;
        let mut head = LogHead::default();
        let steps: &[(u64, u64, &str)] = &[
            (1, 0, "append"),
            (1, 1, "append"),
            (1, 1, "duplicate"),
            (1, 3, "gap"),
            (2, 1, "new-epoch-not-zero"),
            (2, 0, "append"),
            (1, 2, "stale"),
            (2, 1, "append"),
        ];
        for &(epoch, seq, expected) in steps {
            let decision = decide_item_append(&head, 1, Some(&stamp("p", epoch, seq)));
            let got = match &decision {
                D::Append { .. } => "append",
                D::Duplicate => "duplicate",
                D::SequenceGap { .. } => "gap",
                D::NewEpochSeqNotZero => "new-epoch-not-zero",
                D::StaleEpoch { current_epoch: 2 } => "stale",
                other => panic!("unexpected {other:?}"),
            };
            assert_eq!(got, expected, "epoch {epoch} seq {seq}");
            head = apply(&head, &decision);
        }
        assert_eq!(head.length, 4);
        assert_eq!(head.version, 4);
    }

    #[test]
    fn item_seqs_give_each_item_its_seq_and_store_only_what_is_new() {
        let with_items = |seq: u64, items: u64| ProducerHeaders {
            items: Some(items),
            ..stamp("p", 0, seq)
        };
        let head = LogHead::default();
        let ItemAppendDecision::Append {
            next: head,
            skip: 0,
        } = decide_item_append(&head, 3, Some(&with_items(0, 3)))
        else {
            panic!("seqs 0..=2 go in");
        };
        assert_eq!((head.length, head.producers["p"].last_seq), (3, 2));
        // A retry cut differently (seqs 1..=4): 1 and 2 are stored, 3 and 4 are new.
        let ItemAppendDecision::Append { next, skip: 2 } =
            decide_item_append(&head, 4, Some(&with_items(1, 4)))
        else {
            panic!("seqs 3 and 4 go in");
        };
        assert_eq!((next.length, next.producers["p"].last_seq), (5, 4));
        assert_eq!(
            decide_item_append(&head, 2, Some(&with_items(1, 2))),
            ItemAppendDecision::Duplicate
        );
        assert_eq!(
            decide_item_append(&head, 1, Some(&with_items(4, 1))),
            ItemAppendDecision::SequenceGap {
                expected: 3,
                received: 4
            }
        );
        assert!(matches!(
            decide_item_append(&head, 2, Some(&with_items(3, 3))),
            ItemAppendDecision::Refused(_)
        ));
    }

    #[test]
    fn heads_round_trip_and_offsets_order_like_positions() {
        let mut head = LogHead::default();
        for (i, id) in ["a", "b"].iter().enumerate() {
            if let ItemAppendDecision::Append { next, .. } =
                decide_item_append(&head, 2, Some(&stamp(id, i as u64, 0)))
            {
                head = next;
            }
        }
        let text = head.to_json();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(LogHead::from_json(&parsed), Some(head));
        assert!(position_offset(9) < position_offset(10));
        assert_eq!(offset_position(&position_offset(12345)), Some(12345));
        assert_eq!(offset_position("bogus"), None);
        assert_eq!(
            decide_item_append(&LogHead::default(), 0, None),
            ItemAppendDecision::Refused("an append needs at least one item")
        );
    }
}
