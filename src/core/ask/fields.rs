//! Small readers shared by the Ask decoders, over the protocol module's [`Obj`]: strict objects
//! (zod `.strict()`: an unknown key is an error), bounded arrays and trimmed labels.

use serde_json::Value;

use crate::checks::safe_uint;
use crate::protocol::field::{index, FieldError, Obj};

pub(crate) const NO_OTHER_KEYS: &str = "must not have this key";
pub(crate) const MUST_BE_LABEL: &str = "must be a string of 1 to 256 UTF-16 units after trimming";

/// The object at `path`, failing on the first key not in `allowed`.
pub(crate) fn strict<'a>(
    v: &'a Value,
    path: &'a str,
    allowed: &[&str],
) -> Result<Obj<'a>, FieldError> {
    let o = Obj::new(v, path)?;
    if let Some(extra) = v
        .as_object()
        .and_then(|m| m.keys().find(|k| !allowed.contains(&k.as_str())))
    {
        return Err(FieldError::new(o.path_of(extra), NO_OTHER_KEYS));
    }
    Ok(o)
}

/// An array of at most `max` items, each read by `item` (which gets the item's path).
pub(crate) fn array_of<T>(
    v: &Value,
    path: &str,
    max: usize,
    rule: &'static str,
    mut item: impl FnMut(&Value, &str) -> Result<T, FieldError>,
) -> Result<Vec<T>, FieldError> {
    let items = v
        .as_array()
        .filter(|a| a.len() <= max)
        .ok_or_else(|| FieldError::new(path, rule))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| item(v, &index(path, i)))
        .collect()
}

/// A safe integer in `min..=max`.
pub(crate) fn int_in(v: &Value, min: u64, max: u64) -> Option<u64> {
    safe_uint(v).filter(|n| (min..=max).contains(n))
}

/// One of `names` (a string enum), as written.
pub(crate) fn one_of(v: &Value, names: &[&'static str]) -> Option<&'static str> {
    let s = v.as_str()?;
    names.iter().copied().find(|n| *n == s)
}
