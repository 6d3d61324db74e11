//! The size budget: how large (as compact JSON) and how deeply nested a call's arguments may be.
//!
//! One count serves every stage. Text is measured by its length before anything reads it; a value
//! is counted here before the Exact stage or the Full stage reads it; the Validating stage counts
//! each token as its checking deserializer passes it. A count stops at the first byte over the cap
//! or the first level too deep, so a huge or deep value costs no more than the cap's worth of
//! walking, and the walk never recurses deeper than [`NESTING_LIMIT`].

use std::cell::Cell;

use serde_json::{Number, Value};

/// How deep arrays and objects may nest in arguments, the arguments object included, at most:
/// fewer than 128 levels, as `serde_json` allows in text. A value is held to the same limit, so
/// that deserializing it cannot overflow the stack. The default, which an executor may lower
/// ([`ArgumentLimits`]).
pub(crate) const NESTING_LIMIT: usize = 128;

/// The limits a call's arguments are held to: their size as compact JSON, and how deep they
/// nest (fewer than `depth` levels, at most [`NESTING_LIMIT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArgumentLimits {
    pub(crate) bytes: usize,
    pub(crate) depth: usize,
}

impl ArgumentLimits {
    /// Limits of `bytes` and `depth` levels; a depth over [`NESTING_LIMIT`] acts as it.
    pub(crate) fn new(bytes: usize, depth: usize) -> Self {
        ArgumentLimits {
            bytes,
            depth: depth.min(NESTING_LIMIT),
        }
    }

    /// Whether `text` nests too deeply for these limits, as far as a scan before parsing has to
    /// tell: `serde_json` stops text at [`NESTING_LIMIT`] itself, so text is only scanned when
    /// the executor set a lower limit.
    #[inline]
    pub(crate) fn text_too_deep(&self, text: &str) -> bool {
        self.depth < NESTING_LIMIT && text_nests_at_least(text, self.depth)
    }
}

/// Whether JSON text nests `levels` or more arrays and objects, read byte by byte with strings
/// skipped. Malformed text is measured as far as it goes; the parser refuses it afterwards.
fn text_nests_at_least(text: &str, levels: usize) -> bool {
    let mut depth = 0usize;
    let mut bytes = text.bytes();
    while let Some(byte) = bytes.next() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth >= levels {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' => {
                while let Some(byte) = bytes.next() {
                    match byte {
                        b'\\' => {
                            bytes.next();
                        }
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// The longest a number can be written: `-1.2345678901234567e-308`.
pub(super) const NUMBER_ROOM: usize = 24;

/// How a count takes numbers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Numbers {
    /// Each as long as it is written: the count is exact, as errors report it.
    Measured,
    /// Each at [`NUMBER_ROOM`], the most a number can take, which spares measuring it: the count
    /// is an upper bound, so a value it finds too large must be counted again, exactly.
    AtMostRoom,
}

/// Bytes of compact JSON and levels of nesting, counted against the size cap and the nesting
/// limit. String escapes count as one byte, so the count can be low by the number of
/// escaped characters.
///
/// Shared by reference with the checking deserializer (hence the cells): every nested
/// deserializer adds to the one count.
pub(super) struct Budget {
    size: Cell<usize>,
    limit: usize,
    /// How many arrays and objects the count is in.
    depth: Cell<usize>,
    /// How many it may be in: fewer than this.
    depth_limit: usize,
    /// Whether the count was stopped by the nesting limit.
    too_deep: Cell<bool>,
}

impl Budget {
    /// A count of nothing yet, against the limits.
    pub(super) fn new(limits: ArgumentLimits) -> Self {
        Budget {
            size: Cell::new(0),
            limit: limits.bytes,
            depth: Cell::new(0),
            depth_limit: limits.depth,
            too_deep: Cell::new(false),
        }
    }

    /// Counts `bytes` more; false once past the limit.
    #[inline]
    pub(super) fn add(&self, bytes: usize) -> bool {
        let size = self.size.get().saturating_add(bytes);
        self.size.set(size);
        size <= self.limit
    }

    /// Goes into an array or object; false at the nesting limit.
    #[inline]
    pub(super) fn enter(&self) -> bool {
        let depth = self.depth.get() + 1;
        self.depth.set(depth);
        let fits = depth < self.depth_limit;
        if !fits {
            self.too_deep.set(true);
        }
        fits
    }

    /// Comes out of an array or object.
    #[inline]
    pub(super) fn leave(&self) {
        self.depth.set(self.depth.get() - 1);
    }

    /// The bytes counted so far: the size of what was counted, when it fit.
    pub(super) fn size(&self) -> usize {
        self.size.get()
    }

    /// Whether the count stopped at the nesting limit rather than the size cap.
    pub(super) fn too_deep(&self) -> bool {
        self.too_deep.get()
    }

    /// Counts a whole value; false as soon as it passes the limit or nests too deeply.
    pub(super) fn add_value(&self, value: &Value, numbers: Numbers) -> bool {
        match value {
            // Brackets, and a comma before every item but the first.
            Value::Array(items) => {
                let fits = self.enter()
                    && self.add(2 + items.len().saturating_sub(1))
                    && items.iter().all(|item| self.add_item(item, numbers));
                self.leave();
                fits
            }
            // Braces, commas, and each key with its quotes and colon.
            Value::Object(map) => {
                let fits = self.enter()
                    && self.add(2 + map.len().saturating_sub(1))
                    && map
                        .iter()
                        .all(|(key, item)| self.add(key.len() + 3) && self.add_item(item, numbers));
                self.leave();
                fits
            }
            scalar => self.add(scalar_len(scalar, numbers)),
        }
    }

    /// Counts an item of an array or object: a scalar in place, without a call, since most
    /// arguments are objects of scalars.
    #[inline(always)]
    fn add_item(&self, item: &Value, numbers: Numbers) -> bool {
        match item {
            Value::Array(_) | Value::Object(_) => self.add_value(item, numbers),
            scalar => self.add(scalar_len(scalar, numbers)),
        }
    }
}

/// The size of a scalar as compact JSON (or, for a number counted at most room, its room).
#[inline(always)]
fn scalar_len(scalar: &Value, numbers: Numbers) -> usize {
    match scalar {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(_) if numbers == Numbers::AtMostRoom => NUMBER_ROOM,
        Value::Number(n) => number_len(n),
        Value::String(s) => s.len() + 2,
        Value::Array(_) | Value::Object(_) => 0,
    }
}

/// The size of `value` as compact JSON, when it is over `limit`; `None` when it fits. A value
/// nested past the nesting limit counts as over.
pub(crate) fn encoded_size_over(value: &Value, limit: usize) -> Option<usize> {
    let budget = Budget::new(ArgumentLimits::new(limit, NESTING_LIMIT));
    (!budget.add_value(value, Numbers::Measured)).then(|| budget.size())
}

/// How many characters a number takes written as JSON.
fn number_len(n: &Number) -> usize {
    if let Some(i) = n.as_i64() {
        i.unsigned_abs()
            .checked_ilog10()
            .map_or(1, |d| d as usize + 1)
            + usize::from(i < 0)
    } else if let Some(u) = n.as_u64() {
        u.checked_ilog10().map_or(1, |d| d as usize + 1)
    } else {
        n.to_string().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn measured_size_matches_compact_json_without_escapes() {
        for value in [
            json!({}),
            json!({"a": 1, "bb": [true, false, null, -12, 3.5], "c": {"d": "text"}}),
            json!([]),
            json!([0, 10, 99, 100, u64::MAX, i64::MIN]),
        ] {
            let real = serde_json::to_string(&value).unwrap().len();
            assert_eq!(encoded_size_over(&value, real - 1), Some(real), "{value}");
            assert_eq!(encoded_size_over(&value, real), None, "{value}");
        }
    }

    #[test]
    fn numbers_at_most_room_never_fit_what_does_not() {
        let objects = [
            json!({}),
            json!({"x": -3, "y": 4}),
            json!({"a": null, "b": true, "c": "text", "d": [1, 2.5, {"e": false}], "f": {}}),
            json!({"big": u64::MAX, "small": i64::MIN, "tiny": 1e-300}),
        ];
        for object in &objects {
            let real = serde_json::to_string(object).unwrap().len();
            for limit in 0..real + 3 * NUMBER_ROOM {
                if Budget::new(ArgumentLimits::new(limit, NESTING_LIMIT))
                    .add_value(object, Numbers::AtMostRoom)
                {
                    assert!(limit >= real, "{object} fits {limit}, but is {real} long");
                }
            }
            let roomy = Budget::new(ArgumentLimits::new(real + 3 * NUMBER_ROOM, NESTING_LIMIT));
            assert!(roomy.add_value(object, Numbers::AtMostRoom), "{object}");
        }
    }

    #[test]
    fn stops_at_the_nesting_limit_and_says_so() {
        let mut value = json!(1);
        for _ in 0..NESTING_LIMIT - 1 {
            value = json!([value]);
        }
        let unlimited = ArgumentLimits::new(usize::MAX, NESTING_LIMIT);
        let budget = Budget::new(unlimited);
        assert!(budget.add_value(&value, Numbers::Measured));
        assert!(!budget.too_deep());
        let deeper = json!({ "a": value });
        let budget = Budget::new(unlimited);
        assert!(!budget.add_value(&deeper, Numbers::Measured));
        assert!(budget.too_deep());
    }

    #[test]
    fn a_lower_limit_counts_as_the_text_scan_does() {
        let values = [
            json!({}),
            json!({"a": [1, {"b": []}]}),
            json!({"a": "[[[{{{", "b": "\\\"[", "c": [[["x]"]]]}),
            json!([[[[[[]]]]]]),
        ];
        for value in &values {
            let text = value.to_string();
            for depth in 1..9 {
                let limits = ArgumentLimits::new(usize::MAX, depth);
                let fits = Budget::new(limits).add_value(value, Numbers::Measured);
                assert_eq!(limits.text_too_deep(&text), !fits, "{text} at {depth}");
            }
        }
        assert_eq!(ArgumentLimits::new(1, 1_000).depth, NESTING_LIMIT);
        assert!(!ArgumentLimits::new(1, NESTING_LIMIT).text_too_deep(&"[".repeat(500)));
    }
}
