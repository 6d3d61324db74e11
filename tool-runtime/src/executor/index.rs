//! Tool names to entries: one hash of a few word reads, and almost always one name comparison.
//!
//! Open addressing over a power-of-two table kept at most half full. Only the executor's own
//! names are inserted, so the clusters a lookup walks are fixed at build time: a caller's name,
//! whatever it is, can make no lookup slower than the longest cluster.

/// Finds an entry's position by tool name.
pub(crate) struct NameIndex {
    /// Each slot is empty (0) or the position in `keys` plus one, beside the name's hash folded
    /// to 32 bits, which spares comparing names that cannot be equal.
    slots: Box<[(u32, u32)]>,
    /// The names inserted, with the entry each stands for.
    keys: Vec<(Box<str>, usize)>,
}

impl NameIndex {
    /// An index with room for `names` names.
    pub(crate) fn with_capacity(names: usize) -> Self {
        let size = names.saturating_mul(2).max(8).next_power_of_two();
        NameIndex {
            slots: vec![(0, 0); size].into_boxed_slice(),
            keys: Vec::with_capacity(names),
        }
    }

    /// Adds a name for `entry`; when the name is already there, the entry it stands for.
    pub(crate) fn insert(&mut self, name: &str, entry: usize) -> Result<(), usize> {
        if let Some(first) = self.get(name) {
            return Err(first);
        }
        if (self.keys.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.keys.push((name.into(), entry));
        self.place(name, self.keys.len());
        Ok(())
    }

    /// The entry with this name.
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<usize> {
        let hash = hash(name.as_bytes());
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let (folded, key) = self.slots[at];
            if key == 0 {
                return None;
            }
            if folded == fold(hash) {
                let (known, entry) = &self.keys[key as usize - 1];
                if same(known.as_bytes(), name.as_bytes()) {
                    return Some(*entry);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Puts key number `key` (its position plus one) in the first free slot from its hash.
    fn place(&mut self, name: &str, key: usize) {
        let hash = hash(name.as_bytes());
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        while self.slots[at].1 != 0 {
            at = (at + 1) & mask;
        }
        // At most half of a table no larger than `u32::MAX` slots is full.
        self.slots[at] = (fold(hash), u32::try_from(key).unwrap_or(u32::MAX));
    }

    fn grow(&mut self) {
        self.slots = vec![(0, 0); self.slots.len() * 2].into_boxed_slice();
        let names: Vec<Box<str>> = self.keys.iter().map(|(name, _)| name.clone()).collect();
        for (i, name) in names.iter().enumerate() {
            self.place(name, i + 1);
        }
    }
}

/// A word-at-a-time multiplicative hash of a name, seeded with its length. The bytes after the
/// last whole word are read in at most two loads, overlapping bytes already read.
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let mix = |hash: u64, word: u64| (hash ^ word).wrapping_mul(K).rotate_left(26);
    let mut hash = (bytes.len() as u64).wrapping_mul(K);
    let mut rest = bytes;
    while let Some((word, after)) = rest.split_first_chunk::<8>() {
        hash = mix(hash, u64::from_le_bytes(*word));
        rest = after;
    }
    if !rest.is_empty() {
        hash = mix(hash, last_bytes(bytes));
    }
    hash ^ hash >> 29
}

/// Whether two names are equal, compared a word at a time in place (names are short, and a
/// call to `memcmp` would cost more than the comparison).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a, b);
    while let (Some((wx, rx)), Some((wy, ry))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        if wx != wy {
            return false;
        }
        (x, y) = (rx, ry);
    }
    // Of equal lengths under eight bytes, these words hold every byte; otherwise the tail.
    last_bytes(a) == last_bytes(b)
}

/// The last eight bytes of `bytes` as a word, or for a shorter name all of them, read in two
/// overlapping halves (or, under four bytes, the first, middle and last).
#[inline]
fn last_bytes(bytes: &[u8]) -> u64 {
    if let Some(last) = bytes.last_chunk::<8>() {
        return u64::from_le_bytes(*last);
    }
    match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        (Some(first), Some(last)) => {
            u64::from(u32::from_le_bytes(*first)) | u64::from(u32::from_le_bytes(*last)) << 32
        }
        _ => {
            let at = |i: usize| bytes.get(i).map_or(0, |&b| u64::from(b));
            at(0) | at(bytes.len() / 2) << 8 | at(bytes.len().wrapping_sub(1)) << 16
        }
    }
}

fn fold(hash: u64) -> u32 {
    (hash >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_name_and_nothing_else() {
        let names: Vec<String> = (0..5_000)
            .map(|i| format!("tool_{i}"))
            .chain(["a", "", "exactly8", "exactly8_", "日本語"].map(String::from))
            .collect();
        let mut index = NameIndex::with_capacity(3);
        for (i, name) in names.iter().enumerate() {
            assert_eq!(index.insert(name, i), Ok(()));
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(index.get(name), Some(i), "{name}");
        }
        for absent in [
            "tool_5000",
            "b",
            "exactly9",
            "exactly8_x",
            "exactly8_-",
            "tool_",
            "日本",
        ] {
            assert_eq!(index.get(absent), None, "{absent}");
        }
        assert_eq!(index.insert("tool_17", 99), Err(17));
    }

    #[test]
    fn names_are_compared_byte_for_byte() {
        for a in [
            "",
            "a",
            "abc",
            "abcde",
            "abcdefgh",
            "abcdefghijk",
            "abcdefghijklmnopq",
        ] {
            assert!(same(a.as_bytes(), a.as_bytes()), "{a}");
            for i in 0..a.len() {
                let mut b = a.as_bytes().to_vec();
                b[i] = b'X';
                assert!(!same(a.as_bytes(), &b), "{a} at {i}");
            }
            assert!(!same(a.as_bytes(), format!("{a}X").as_bytes()), "{a}");
        }
    }
}
