//! Tool names to entries: one hash of a few word reads, and almost always one name comparison.
//!
//! Open addressing over a power-of-two table kept at most half full. A slot holds the entry's
//! position itself, so a lookup reads the slot and then the entry, whose name it compares: no
//! list of keys in between. Only the executor's own names are inserted, so the clusters a lookup
//! walks are fixed at build time: a caller's name, whatever it is, can make no lookup slower than
//! the longest cluster.

/// Finds an entry's position by tool name. It keeps no names: the caller shows it an entry's
/// name by position.
pub(crate) struct NameIndex {
    /// Each slot is empty (0) or an entry's position plus one, beside its name's hash folded to
    /// 32 bits, which spares comparing names that cannot be equal.
    slots: Box<[(u32, u32)]>,
    /// Each name's hash and entry, in the order inserted, to place them again when the table
    /// grows.
    placed: Vec<(u64, u32)>,
}

impl NameIndex {
    /// An index with room for `names` names.
    pub(crate) fn with_capacity(names: usize) -> Self {
        let size = names.saturating_mul(2).max(8).next_power_of_two();
        NameIndex {
            slots: vec![(0, 0); size].into_boxed_slice(),
            placed: Vec::with_capacity(names),
        }
    }

    /// Adds a name for `entry`; when the name is already there, the entry it stands for.
    /// `name_of` gives the name of an entry already inserted.
    pub(crate) fn insert<'n>(
        &mut self,
        name: &str,
        entry: usize,
        name_of: impl Fn(usize) -> &'n str,
    ) -> Result<(), usize> {
        if let Some(first) = self.get(name, name_of) {
            return Err(first);
        }
        if (self.placed.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        // Entries are fewer than `u32::MAX`: each takes far more memory than a byte.
        let entry = u32::try_from(entry).unwrap_or(u32::MAX);
        let hash = hash(name.as_bytes());
        self.placed.push((hash, entry));
        self.place(hash, entry);
        Ok(())
    }

    /// The entry with this name. `name_of` gives the name of an entry that was inserted.
    #[inline]
    pub(crate) fn get<'n>(&self, name: &str, name_of: impl Fn(usize) -> &'n str) -> Option<usize> {
        let hash = hash(name.as_bytes());
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let (folded, slot) = self.slots[at];
            if slot == 0 {
                return None;
            }
            let entry = slot as usize - 1;
            if folded == fold(hash) && same(name_of(entry).as_bytes(), name.as_bytes()) {
                return Some(entry);
            }
            at = (at + 1) & mask;
        }
    }

    /// Puts `entry` in the first free slot from its name's hash.
    fn place(&mut self, hash: u64, entry: u32) {
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        while self.slots[at].1 != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = (fold(hash), entry.saturating_add(1));
    }

    fn grow(&mut self) {
        self.slots = vec![(0, 0); self.slots.len() * 2].into_boxed_slice();
        for (hash, entry) in std::mem::take(&mut self.placed) {
            self.place(hash, entry);
            self.placed.push((hash, entry));
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
        let name_of = |i: usize| names[i].as_str();
        let mut index = NameIndex::with_capacity(3);
        for (i, name) in names.iter().enumerate() {
            assert_eq!(index.insert(name, i, name_of), Ok(()));
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(index.get(name, name_of), Some(i), "{name}");
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
            assert_eq!(index.get(absent, name_of), None, "{absent}");
        }
        assert_eq!(index.insert("tool_17", 99, name_of), Err(17));
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
