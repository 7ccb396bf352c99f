//! Pure decisions of the Durable Object store: whether a save may write (CAS), how text is
//! split into rows that stay far below the Durable Object value limit, how rows are put back
//! together, and which message rows a save must rewrite. No JavaScript here: the store
//! (`super::store`) reads rows, asks these functions, then commits in one transaction.

/// What the stored record looks like to a compare-and-set save.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    Absent,
    Cursor(u64),
    /// A row exists but its cursor is not a safe integer (a damaged record).
    Unreadable,
}

/// The outcome of a compare-and-set save, decided before anything is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveDecision {
    Write,
    Conflict,
}

/// `expected` `None` creates only when absent; `Some(c)` writes only over stored cursor `c`.
/// Everything else (including a damaged record) is a conflict, never an overwrite.
pub fn decide_save(stored: Stored, expected: Option<u64>) -> SaveDecision {
    match (stored, expected) {
        (Stored::Absent, None) => SaveDecision::Write,
        (Stored::Cursor(have), Some(want)) if have == want => SaveDecision::Write,
        _ => SaveDecision::Conflict,
    }
}

/// Splits `text` into consecutive parts of at most `row_bytes_max` UTF-8 bytes, cut only at
/// character boundaries. Always at least one part (an empty text is one empty row), so a
/// record always has a row to find. `row_bytes_max` below 4 is raised to 4 (the longest
/// UTF-8 character), so every part makes progress.
pub fn split_rows(text: &str, row_bytes_max: usize) -> Vec<&str> {
    let max = row_bytes_max.max(4);
    let mut parts = Vec::with_capacity(text.len() / max + 1);
    let mut rest = text;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, tail) = rest.split_at(cut);
        parts.push(head);
        rest = tail;
    }
    parts.push(rest);
    parts
}

/// One stored row of a multi-row record: which record (`position`), which `part` of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub position: u64,
    pub part: u64,
    pub body: String,
}

/// Why stored rows do not form whole records (storage damaged or written by something else).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowsError {
    /// Rows must come ordered by (position, part), positions 0.. and parts 0.. with no gaps.
    Gap { position: u64, part: u64 },
}

impl std::fmt::Display for RowsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowsError::Gap { position, part } => {
                write!(
                    f,
                    "stored rows are not contiguous at position {position}, part {part}"
                )
            }
        }
    }
}

/// Joins rows ordered by (position, part) back into one text per position.
pub fn join_rows(rows: impl IntoIterator<Item = Row>) -> Result<Vec<String>, RowsError> {
    let mut records: Vec<String> = Vec::new();
    let mut next_part = 0u64;
    for row in rows {
        let position = records.len() as u64;
        if row.part == 0 && row.position == position {
            records.push(row.body);
            next_part = 1;
        } else if row.position + 1 == position && row.part == next_part {
            if let Some(last) = records.last_mut() {
                last.push_str(&row.body);
            }
            next_part += 1;
        } else {
            return Err(RowsError::Gap {
                position: row.position,
                part: row.part,
            });
        }
    }
    Ok(records)
}

/// Which message rows a save must touch, decided by comparing stored and new texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessagePlan {
    /// Positions whose text changed or is new: their rows are replaced.
    pub rewrite: Vec<usize>,
    /// Rows at this position and beyond are deleted (the new history is shorter), if any.
    pub truncate_from: Option<usize>,
}

/// A chat history mostly grows at its end, so a save usually rewrites one or two messages
/// (the new user message and the answer) instead of the whole history.
pub fn plan_messages(stored: &[String], new: &[String]) -> MessagePlan {
    let rewrite = new
        .iter()
        .enumerate()
        .filter(|(i, text)| stored.get(*i) != Some(*text))
        .map(|(i, _)| i)
        .collect();
    let truncate_from = (stored.len() > new.len()).then_some(new.len());
    MessagePlan {
        rewrite,
        truncate_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decide_save_table() {
        fn check(stored: Stored, expected: Option<u64>, want: SaveDecision) {
            assert_eq!(
                decide_save(stored, expected),
                want,
                "{stored:?} expecting {expected:?}"
            );
        }
        use SaveDecision::{Conflict, Write};
        check(Stored::Absent, None, Write);
        check(Stored::Absent, Some(0), Conflict);
        check(Stored::Cursor(1), None, Conflict);
        check(Stored::Cursor(1), Some(1), Write);
        check(Stored::Cursor(2), Some(1), Conflict);
        check(Stored::Cursor(1), Some(2), Conflict);
        check(Stored::Unreadable, None, Conflict);
        check(Stored::Unreadable, Some(1), Conflict);
    }

    #[test]
    fn split_rows_table() {
        fn check(text: &str, max: usize, want: &[&str]) {
            let parts = split_rows(text, max);
            assert_eq!(parts, want, "{text:?} at {max}");
            assert_eq!(parts.concat(), text);
            assert!(parts.iter().all(|p| p.len() <= max.max(4)));
        }
        check("", 4, &[""]);
        check("abcd", 4, &["abcd"]);
        check("abcdefghi", 4, &["abcd", "efgh", "i"]);
        // "é" is 2 bytes, "€" 3, "𝄞" 4: cuts move back to a character boundary.
        check("aé€", 4, &["aé", "€"]);
        check("𝄞𝄞", 4, &["𝄞", "𝄞"]);
        check("ab", 1, &["ab"]);
        check("a𝄞", 2, &["a", "𝄞"]);
    }

    #[test]
    fn split_then_join_round_trips_long_text() {
        let text: String = "héllo wörld €𝄞 ".repeat(50_000);
        let parts = split_rows(&text, 1_000);
        assert!(parts.len() > 900);
        let rows = parts.iter().enumerate().map(|(i, p)| Row {
            position: 0,
            part: i as u64,
            body: (*p).to_string(),
        });
        assert_eq!(join_rows(rows), Ok(vec![text]));
    }

    fn row(position: u64, part: u64, body: &str) -> Row {
        Row {
            position,
            part,
            body: body.into(),
        }
    }

    #[test]
    fn join_rows_table() {
        fn check(rows: Vec<Row>, want: Result<Vec<&str>, RowsError>) {
            let want = want.map(|v| v.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(join_rows(rows.clone()), want, "{rows:?}");
        }
        check(vec![], Ok(vec![]));
        check(vec![row(0, 0, "a")], Ok(vec!["a"]));
        check(
            vec![row(0, 0, "a"), row(0, 1, "b"), row(1, 0, "c")],
            Ok(vec!["ab", "c"]),
        );
        check(
            vec![row(1, 0, "a")],
            Err(RowsError::Gap {
                position: 1,
                part: 0,
            }),
        );
        check(
            vec![row(0, 1, "a")],
            Err(RowsError::Gap {
                position: 0,
                part: 1,
            }),
        );
        check(
            vec![row(0, 0, "a"), row(0, 2, "b")],
            Err(RowsError::Gap {
                position: 0,
                part: 2,
            }),
        );
        check(
            vec![row(0, 0, "a"), row(2, 0, "b")],
            Err(RowsError::Gap {
                position: 2,
                part: 0,
            }),
        );
        check(
            vec![row(0, 0, "a"), row(1, 0, "b"), row(0, 1, "c")],
            Err(RowsError::Gap {
                position: 0,
                part: 1,
            }),
        );
    }

    #[test]
    fn plan_messages_table() {
        fn check(stored: &[&str], new: &[&str], rewrite: &[usize], truncate_from: Option<usize>) {
            let s: Vec<String> = stored.iter().map(|t| t.to_string()).collect();
            let n: Vec<String> = new.iter().map(|t| t.to_string()).collect();
            let want = MessagePlan {
                rewrite: rewrite.to_vec(),
                truncate_from,
            };
            assert_eq!(plan_messages(&s, &n), want, "{stored:?} -> {new:?}");
        }
        check(&[], &[], &[], None);
        check(&[], &["a", "b"], &[0, 1], None);
        check(&["a", "b"], &["a", "b", "c", "d"], &[2, 3], None);
        check(&["a", "b"], &["a", "B", "c"], &[1, 2], None);
        check(&["a", "b", "c"], &["a"], &[], Some(1));
        check(&["a", "b", "c"], &[], &[], Some(0));
        check(&["a", "b"], &["x", "b"], &[0], None);
    }
}
