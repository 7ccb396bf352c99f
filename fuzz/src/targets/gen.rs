//! Structure-aware input generation. A target's bytes drive a [`Gen`]: every choice (which
//! field to drop, which value to put where) consumes input bytes, so libFuzzer's coverage
//! feedback steers the structure, and random bytes from the seeded test runner still produce
//! inputs that are mostly well-formed (and get past the first check of a decoder).
//!
//! Once the bytes run out every choice takes its first option, so any input is a valid one.

use arbitrary::Unstructured;
use serde_json::{Map, Number, Value};

/// A target's input: raw bytes (the decoder's text as given) or a generator.
pub enum Input<'a> {
    Raw(&'a [u8]),
    Structured(Gen<'a>),
}

/// A leading [`STRUCTURED`] byte makes the rest drive a [`Gen`]; any other input is raw, as is
/// (so a seed file of raw input is plain text).
pub fn input(data: &[u8]) -> Input<'_> {
    match data.split_first() {
        Some((&STRUCTURED, rest)) => Input::Structured(Gen::new(rest)),
        _ => Input::Raw(data),
    }
}

/// The first byte of a structured input (a control character no text input starts with).
pub const STRUCTURED: u8 = 0x01;

/// Choices drawn from fuzzer bytes.
pub struct Gen<'a> {
    u: Unstructured<'a>,
    /// How often (percent) each place that can be wrong is made wrong, drawn once per input:
    /// 0 makes a valid input, a little makes a nearly valid one, a lot makes garbage.
    flaw_percent: u8,
}

/// Strings that mean something to one of the decoders (keys, enum values, sentinels).
const WORDS: &[&str] = &[
    "",
    " ",
    "a",
    "x1",
    "t1",
    "s1",
    "-1",
    "now",
    "null",
    "true",
    "[DONE]",
    "user",
    "assistant",
    "system",
    "tool",
    "pending",
    "streaming",
    "complete",
    "error",
    "idle",
    "running",
    "requires_confirmation",
    "completed",
    "indeterminate",
    "text",
    "image",
    "audio",
    "video",
    "file",
    "low",
    "high",
    "auto",
    "submit",
    "retry",
    "edit",
    "regenerate",
    "stop",
    "length",
    "tool_calls",
    "content_filter",
    "application/json",
    "text/plain",
    "\u{feff}",
    "\u{85}",
    "\u{2028}",
    "é",
    "😀",
    "\\",
    "\"",
    "\n",
    "\r\n",
    "\u{0}",
];

impl<'a> Gen<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        let mut g = Gen {
            u: Unstructured::new(data),
            flaw_percent: 0,
        };
        g.flaw_percent = g.pick(&[0, 0, 1, 2, 5, 20]);
        g
    }

    /// True where this input should break a rule (see `flaw_percent`).
    pub fn flaw(&mut self) -> bool {
        let percent = self.flaw_percent;
        self.chance(percent)
    }

    /// One of `valid`, or (where this input breaks a rule) one of `invalid`.
    pub fn one_of(&mut self, valid: &[&str], invalid: &[&str]) -> Value {
        let words = if self.flaw() { invalid } else { valid };
        Value::String(self.pick(words).to_owned())
    }

    pub fn byte(&mut self) -> u8 {
        self.u.arbitrary().unwrap_or(0)
    }

    /// True with probability about `percent`/100; false once the input is exhausted.
    pub fn chance(&mut self, percent: u8) -> bool {
        !self.u.is_empty() && u32::from(self.byte()) * 100 < u32::from(percent) * 256
    }

    /// An index below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.u.choose_index(n).unwrap_or(0)
    }

    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    pub fn u64_in(&mut self, lo: u64, hi: u64) -> u64 {
        self.u.int_in_range(lo..=hi).unwrap_or(lo)
    }

    /// Mostly small numbers, sometimes anything: edge values sit at both ends.
    pub fn u64_any(&mut self) -> u64 {
        match self.below(4) {
            0 => self.u64_in(0, 8),
            1 => self.u64_in(0, 1 << 20),
            2 => self.pick(&[
                9_007_199_254_740_991,
                9_007_199_254_740_992,
                9_999_999_999_999_999,
                u64::MAX,
                u64::MAX - 1,
                1 << 53,
                (1 << 63) - 1,
            ]),
            _ => self.u.arbitrary().unwrap_or(0),
        }
    }

    pub fn bytes(&mut self, len_max: usize) -> Vec<u8> {
        let len = self.below(len_max + 1);
        self.u.bytes(len.min(self.u.len())).unwrap_or(&[]).to_vec()
    }

    /// Any string: a meaningful word, raw (possibly odd) Unicode, or both joined.
    pub fn string(&mut self) -> String {
        match self.below(4) {
            0 => self.pick(WORDS).to_owned(),
            1 => self.u.arbitrary::<String>().unwrap_or_default(),
            2 => String::from_utf8_lossy(&self.bytes(16)).into_owned(),
            _ => format!("{}{}", self.pick(WORDS), self.pick(WORDS)),
        }
    }

    /// A SafeId, or where this input breaks a rule maybe not (too long, bad start...).
    pub fn safe_id(&mut self) -> String {
        let choice = if self.flaw() { self.below(3) } else { 3 };
        match choice {
            0 => self.string(),
            1 => "a".repeat(self.pick(&[128, 129])),
            2 => format!("{}{}", self.pick(&["-", ".", "_", ":"]), "x"),
            _ => {
                let len = 1 + self.below(12);
                let alphabet = b"abcXYZ019._:-";
                let mut id: String = (0..len)
                    .map(|_| char::from(alphabet[self.below(alphabet.len())]))
                    .collect();
                if !id.as_bytes()[0].is_ascii_alphanumeric() {
                    id.replace_range(..1, "k");
                }
                id
            }
        }
    }

    /// Epoch milliseconds across the range `toISOString` writes with four-digit years.
    pub fn epoch_ms(&mut self) -> i64 {
        match self.below(3) {
            0 => 1_783_738_800_000 + self.u64_in(0, 1 << 40) as i64,
            1 => self.pick(&[
                0,
                -1,
                951_782_400_000,
                253_402_300_799_999,
                -62_167_219_200_000,
            ]),
            _ => self
                .u
                .int_in_range(-62_167_219_200_000..=253_402_300_799_999)
                .unwrap_or(0),
        }
    }

    /// A timestamp string: `toISOString` form, another valid offset form, or (where this
    /// input breaks a rule) a mutated one.
    pub fn timestamp(&mut self) -> String {
        let iso = self.iso_millis();
        if self.flaw() {
            return self.mutate_text(&iso);
        }
        match self.below(6) {
            0 => iso.replace('Z', "+05:30"),
            1 => iso[..16].to_owned() + "Z",
            _ => iso,
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` (as `toISOString` writes it).
    pub fn iso_millis(&mut self) -> String {
        turnkeep::core::checks::format_iso_millis(self.epoch_ms())
    }

    /// `text` with one byte replaced, dropped or duplicated (kept valid UTF-8).
    pub fn mutate_text(&mut self, text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        if bytes.is_empty() {
            return self.string();
        }
        let at = self.below(bytes.len());
        match self.below(3) {
            0 => bytes[at] = self.pick(b"0189:-+.TZtz _/"),
            1 => {
                bytes.remove(at);
            }
            _ => bytes.insert(at, bytes[at]),
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// An integer field: a safe unsigned integer (`1.0` included), or where this input breaks
    /// a rule a near miss (negative, fraction, too large, a string).
    pub fn uint_value(&mut self) -> Value {
        if self.flaw() {
            return self.pick(&[
                Value::from(-1),
                Value::from(1.5),
                Value::from(9_007_199_254_740_992u64),
                Value::String("1".into()),
            ]);
        }
        match self.below(4) {
            0 => Value::from(self.u64_in(0, 1000) as f64),
            1 => Value::from(self.u64_in(0, 9_007_199_254_740_991)),
            _ => Value::from(self.u64_in(0, 1000)),
        }
    }

    /// Any JSON value, at most `depth` levels deep.
    pub fn any_value(&mut self, depth: usize) -> Value {
        let kinds = if depth == 0 { 4 } else { 6 };
        match self.below(kinds) {
            0 => Value::Null,
            1 => Value::Bool(self.chance(50)),
            2 => self.number(),
            3 => Value::String(self.string()),
            4 => {
                let len = self.below(4);
                Value::Array((0..len).map(|_| self.any_value(depth - 1)).collect())
            }
            _ => {
                let len = self.below(4);
                let map = (0..len)
                    .map(|_| (self.string(), self.any_value(depth - 1)))
                    .collect::<Map<_, _>>();
                Value::Object(map)
            }
        }
    }

    pub fn number(&mut self) -> Value {
        match self.below(5) {
            0 => Value::from(self.u64_any()),
            1 => Value::from(-(self.u64_in(0, 1 << 60) as i64)),
            2 => {
                let f: f64 = self.u.arbitrary().unwrap_or(0.0);
                Number::from_f64(f).map_or(Value::Null, Value::Number)
            }
            3 => Value::from(self.pick(&[0.0, -0.0, 0.5, 1e-7, 1e21, 1.7976931348623157e308])),
            _ => Value::from(self.u64_in(0, 100)),
        }
    }

    /// Where this input breaks a rule, replaces a well-formed value by anything at all (a type
    /// confusion, `null`...).
    pub fn perturb(&mut self, v: Value) -> Value {
        if self.flaw() {
            self.any_value(2)
        } else {
            v
        }
    }

    /// An object from `fields`, each possibly perturbed or left out where this input breaks
    /// rules, sometimes with an unknown field added (which decoders drop).
    pub fn object(&mut self, fields: Vec<(&str, Value)>) -> Value {
        let mut map = Map::new();
        for (key, value) in fields {
            if self.flaw() {
                continue;
            }
            let value = self.perturb(value);
            map.insert(key.to_owned(), value);
        }
        if self.chance(5) {
            let key = format!("x-{}", self.string()); // never one of the schema's own keys
            let value = self.any_value(2);
            map.insert(key, value);
        }
        Value::Object(map)
    }

    /// Up to `max` items made by `item`.
    pub fn list(&mut self, max: usize, mut item: impl FnMut(&mut Self) -> Value) -> Value {
        let len = self.below(max + 1);
        Value::Array((0..len).map(|_| item(self)).collect())
    }

    /// JSON text of `v`: compact, pretty, or with odd but legal whitespace.
    pub fn json_text(&mut self, v: &Value) -> String {
        match self.below(4) {
            0 => serde_json::to_string_pretty(v).unwrap_or_default(),
            1 => format!(
                "{}{v}{}",
                self.pick(&[" ", "\t", "\r\n", ""]),
                self.pick(&["\n", " ", ""])
            ),
            _ => v.to_string(),
        }
    }
}
