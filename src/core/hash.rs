//! Hash maps and sets whose iteration order is the same on every run. std's `HashMap::new`
//! seeds every map with fresh randomness (`RandomState`), which the core must not draw:
//! `src/clippy.toml` bans those constructors, and these take their place (lookups cost the same).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, DefaultHasher};

/// A hasher with fixed keys.
pub type FixedState = BuildHasherDefault<DefaultHasher>;
pub type FixedHashMap<K, V> = HashMap<K, V, FixedState>;
pub type FixedHashSet<T> = HashSet<T, FixedState>;
