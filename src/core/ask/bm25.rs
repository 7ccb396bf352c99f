//! The built-in local retriever: Okapi BM25 over a small site corpus, so a host can serve Ask
//! with no search service. Deterministic: same corpus and question, same sources in the same
//! order (ties keep corpus order).
//!
//! Terms are lower-cased runs of letters and digits, minus a short English stop list, with a
//! light suffix rule (`tests`, `testing`, `tested` -> `test`) applied alike to documents and
//! questions. A document's title counts [`TITLE_WEIGHT`] times, so a section named after the
//! question ranks first. Scores use the usual k1 = 1.2, b = 0.75 and the non-negative idf
//! `ln(1 + (N - df + 0.5) / (df + 0.5))`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::strict;
use super::sources::Source;
use super::text::{label, safe_href};
use crate::limits::{
    ASK_CORPUS_DOCUMENTS_MAX, ASK_CORPUS_TEXT_BYTES_MAX, ASK_QUERY_TERMS_MAX,
    ASK_RETRIEVER_EXCERPT_CHARS_MAX,
};
use crate::protocol::field::{as_safe_id, index, FieldError, MUST_BE_SAFE_ID};

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// How many times a title's terms count.
pub(crate) const TITLE_WEIGHT: u32 = 3;

/// A corpus document as a host gives it: `{ id, title, url, text }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    pub id: String,
    pub title: String,
    pub url: String,
    pub text: String,
}

/// An indexed corpus. Terms are numbered once (`vocabulary`); each document keeps its
/// paragraphs with the distinct term ids in them, so choosing an excerpt needs no tokenizing.
#[derive(Debug)]
pub struct Bm25Index {
    docs: Vec<Document>,
    /// Weighted term count of each document.
    lengths: Vec<u32>,
    average_length: f64,
    vocabulary: BTreeMap<String, u32>,
    /// By term id: (document index, weighted term frequency), in document order.
    postings: Vec<Vec<(usize, u32)>>,
    /// By document: its non-blank paragraphs.
    paragraphs: Vec<Vec<Paragraph>>,
}

/// A paragraph of a document's text: its byte range and its distinct term ids, sorted.
#[derive(Debug)]
struct Paragraph {
    start: usize,
    end: usize,
    terms: Vec<u32>,
}

/// One ranked document.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f64,
}

/// Decodes `documents` (unique SafeId ids, label titles, safe urls, non-empty text) within the
/// corpus limits.
pub fn decode_documents(v: &Value) -> Result<Vec<Document>, FieldError> {
    let list = v
        .as_array()
        .filter(|l| l.len() <= ASK_CORPUS_DOCUMENTS_MAX)
        .ok_or_else(|| {
            FieldError::new("documents", "must be an array of at most 10000 documents")
        })?;
    let mut docs = Vec::with_capacity(list.len());
    let mut ids = std::collections::BTreeSet::new();
    let mut bytes = 0usize;
    for (i, item) in list.iter().enumerate() {
        let path = index("documents", i);
        let o = strict(item, &path, &["id", "title", "url", "text"])?;
        let id = o.required("id", MUST_BE_SAFE_ID, as_safe_id)?;
        if !ids.insert(id.clone()) {
            return Err(FieldError::new(
                o.path_of("id"),
                "must be unique in the corpus",
            ));
        }
        let title = o.required("title", super::fields::MUST_BE_LABEL, |v| {
            v.as_str().and_then(label)
        })?;
        let url = o.required(
            "url",
            "must be a site-relative path or an http(s) URL without credentials",
            |v| {
                v.as_str()
                    .filter(|s| safe_href(s).is_some())
                    .map(str::to_owned)
            },
        )?;
        let text = o.non_empty_string("text")?;
        bytes += text.len();
        if bytes > ASK_CORPUS_TEXT_BYTES_MAX {
            return Err(FieldError::new(
                path,
                "passes the corpus text limit of 16 MiB",
            ));
        }
        docs.push(Document {
            id,
            title,
            url,
            text,
        });
    }
    Ok(docs)
}

impl Bm25Index {
    pub fn new(docs: Vec<Document>) -> Self {
        let mut vocabulary: BTreeMap<String, u32> = BTreeMap::new();
        let mut postings: Vec<Vec<(usize, u32)>> = Vec::new();
        let mut lengths = Vec::with_capacity(docs.len());
        let mut paragraphs = Vec::with_capacity(docs.len());
        for (i, doc) in docs.iter().enumerate() {
            let mut id = |term: String| -> u32 {
                let next = vocabulary.len() as u32;
                *vocabulary.entry(term).or_insert_with(|| {
                    postings.push(Vec::new());
                    next
                })
            };
            let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
            for term in terms(&doc.title) {
                *counts.entry(id(term)).or_default() += TITLE_WEIGHT;
            }
            let mut own = Vec::new();
            for (start, end) in paragraph_ranges(&doc.text) {
                let mut ids: Vec<u32> = terms(&doc.text[start..end]).map(&mut id).collect();
                for term in &ids {
                    *counts.entry(*term).or_default() += 1;
                }
                ids.sort_unstable();
                ids.dedup();
                own.push(Paragraph {
                    start,
                    end,
                    terms: ids,
                });
            }
            paragraphs.push(own);
            lengths.push(counts.values().sum());
            for (term, tf) in counts {
                postings[term as usize].push((i, tf));
            }
        }
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        let average_length = if docs.is_empty() {
            0.0
        } else {
            total as f64 / docs.len() as f64
        };
        Self {
            docs,
            lengths,
            average_length,
            vocabulary,
            postings,
            paragraphs,
        }
    }

    /// The ids of a question's distinct terms that occur in the corpus.
    fn query_ids(&self, query: &str) -> Vec<u32> {
        query_terms(query)
            .iter()
            .filter_map(|t| self.vocabulary.get(t).copied())
            .collect()
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    pub fn document(&self, i: usize) -> &Document {
        &self.docs[i]
    }

    /// The `limit` best documents for `query` with a positive score, best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.rank(&self.query_ids(query), limit)
    }

    fn rank(&self, query: &[u32], limit: usize) -> Vec<Hit> {
        let mut scores = vec![0.0f64; self.docs.len()];
        for &term in query {
            let list = &self.postings[term as usize];
            let idf = self.idf(list.len());
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                let norm = 1.0 - B + B * f64::from(self.lengths[doc]) / self.average_length;
                scores[doc] += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .map(|(doc, score)| Hit { doc, score })
            .collect();
        // Stable sort: equal scores keep corpus order.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(limit);
        hits
    }

    fn idf(&self, df: usize) -> f64 {
        let n = self.docs.len() as f64;
        let df = df as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The ranked documents as citable sources, each with the paragraph that holds the most
    /// distinct question terms (the first on a tie, the first paragraph when none does).
    pub fn sources(&self, query: &str, limit: usize) -> Vec<Source> {
        let wanted = self.query_ids(query);
        self.rank(&wanted, limit)
            .into_iter()
            .map(|hit| {
                let doc = &self.docs[hit.doc];
                let best = self.paragraphs[hit.doc]
                    .iter()
                    .enumerate()
                    .max_by_key(|(i, p)| {
                        let found = wanted
                            .iter()
                            .filter(|w| p.terms.binary_search(w).is_ok())
                            .count();
                        (found, std::cmp::Reverse(*i))
                    })
                    .map_or(doc.text.as_str(), |(_, p)| &doc.text[p.start..p.end]);
                Source {
                    id: doc.id.clone(),
                    title: doc.title.clone(),
                    href: doc.url.clone(),
                    excerpt: excerpt(best),
                }
            })
            .collect()
    }
}

/// The distinct terms of a question, in order, at most [`ASK_QUERY_TERMS_MAX`].
pub fn query_terms(query: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for term in terms(query) {
        if !seen.contains(&term) {
            seen.push(term);
            if seen.len() == ASK_QUERY_TERMS_MAX {
                break;
            }
        }
    }
    seen
}

/// The terms of a text (see the module doc).
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .filter(|w| {
            !STOP_WORDS.contains(&w.as_str())
                && (w.chars().count() > 1 || w.chars().all(|c| c.is_numeric()))
        })
        .map(|w| stem(&w))
}

/// `tests`, `testing`, `tested` -> `test`; `queries` -> `query`. Deliberately small: it only
/// has to map a question's words and a document's words to the same term.
pub fn stem(word: &str) -> String {
    let n = word.chars().count();
    let strip = |suffix: &str, min: usize| word.strip_suffix(suffix).filter(|_| n >= min);
    if let Some(w) = strip("ies", 5) {
        return format!("{w}y");
    }
    if let Some(w) = strip("sses", 5) {
        return format!("{w}ss");
    }
    if let Some(w) = strip("ing", 6) {
        return w.to_owned();
    }
    if let Some(w) = strip("ed", 5) {
        return w.to_owned();
    }
    if !word.ends_with("ss") && !word.ends_with("us") && !word.ends_with("is") {
        if let Some(w) = strip("s", 4) {
            return w.to_owned();
        }
    }
    word.to_owned()
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "if", "in", "is", "it", "its", "me", "my", "of", "on", "or", "so", "that", "the", "their",
    "then", "there", "this", "to", "was", "what", "when", "where", "which", "who", "why", "will",
    "with", "you", "your",
];

/// The byte ranges of the non-blank paragraphs (blank-line separated) of `text`.
fn paragraph_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in text.split("\n\n") {
        let end = start + part.len();
        if !part.trim().is_empty() {
            out.push((start, end));
        }
        start = end + 2;
    }
    out
}

/// A paragraph as an excerpt: whitespace collapsed and cut at a word boundary to
/// [`ASK_RETRIEVER_EXCERPT_CHARS_MAX`] characters with `…`.
pub fn excerpt(paragraph: &str) -> String {
    let collapsed = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= ASK_RETRIEVER_EXCERPT_CHARS_MAX {
        return collapsed;
    }
    let cut: String = collapsed
        .chars()
        .take(ASK_RETRIEVER_EXCERPT_CHARS_MAX - 1)
        .collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > cut.len() / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    format!("{cut}…")
}
