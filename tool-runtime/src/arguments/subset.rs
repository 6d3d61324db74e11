//! The [`SubsetChecker`]: a checker compiled from the subset of JSON Schema that generated tool
//! schemas mostly use, decided in a few nanoseconds per property. The Validating stage asks it
//! one token at a time; [`is_valid`](SubsetChecker::is_valid) asks it of a whole value.
//!
//! It only says valid or not. A schema with any keyword outside the subset compiles to `None`
//! and is checked by `jsonschema` alone; when this checker says invalid, `jsonschema` explains
//! why. The two are kept in agreement by a differential test over random schemas and instances.

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

/// Keywords that say nothing about validity.
const ANNOTATIONS: &[&str] = &[
    "description",
    "default",
    "examples",
    "title",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// A schema in the subset, compiled for quick checks. `jsonschema` stays the reference (the Full
/// stage); this only decides faster.
#[derive(Debug)]
pub(crate) struct SubsetChecker {
    types: Option<u8>,
    /// Sets of allowed strings or nulls (`enum`, `const`); a value must be in every one.
    allowed: Vec<Vec<Option<String>>>,
    minimum: Option<(Bound, bool)>,
    maximum: Option<(Bound, bool)>,
    /// The bounds as an inclusive range of integers, when both are integers (or absent), as
    /// canonical schemas write integer types: an integer is checked with two comparisons.
    integer_range: Option<(i128, i128)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    items: Option<Box<SubsetChecker>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    properties: Vec<Property>,
    /// All required properties' bits.
    required_mask: u64,
    /// Required names that are not among `properties`, with their bits.
    required_elsewhere: Vec<(String, u64)>,
    closed: bool,
}

pub(super) const NULL: u8 = 1;
pub(super) const BOOLEAN: u8 = 2;
pub(super) const INTEGER: u8 = 4;
pub(super) const NUMBER: u8 = 8;
pub(super) const STRING: u8 = 16;
pub(super) const ARRAY: u8 = 32;
pub(super) const OBJECT: u8 = 64;

impl SubsetChecker {
    /// A schema with no keywords: it accepts anything.
    const fn anything() -> SubsetChecker {
        SubsetChecker {
            types: None,
            allowed: Vec::new(),
            minimum: None,
            maximum: None,
            integer_range: None,
            min_length: None,
            max_length: None,
            items: None,
            min_items: None,
            max_items: None,
            properties: Vec::new(),
            required_mask: 0,
            required_elsewhere: Vec::new(),
            closed: false,
        }
    }

    /// The checker for `schema`, or `None` when it uses anything outside the subset.
    pub(crate) fn compile(schema: &Value) -> Option<SubsetChecker> {
        let map = schema.as_object()?;
        let mut fast = SubsetChecker::anything();
        let mut required = Vec::new();
        for (keyword, value) in map {
            match keyword.as_str() {
                "type" => fast.types = Some(type_set(value)?),
                "enum" => fast.allowed.push(strings_or_nulls(value)?),
                "const" => fast.allowed.push(vec![Some(value.as_str()?.to_owned())]),
                "minimum" => fast.minimum = Some((Bound::of(value.as_number()?), false)),
                "exclusiveMinimum" => fast.minimum = Some((Bound::of(value.as_number()?), true)),
                "maximum" => fast.maximum = Some((Bound::of(value.as_number()?), false)),
                "exclusiveMaximum" => fast.maximum = Some((Bound::of(value.as_number()?), true)),
                "minLength" => fast.min_length = Some(value.as_u64()?),
                "maxLength" => fast.max_length = Some(value.as_u64()?),
                "minItems" => fast.min_items = Some(value.as_u64()?),
                "maxItems" => fast.max_items = Some(value.as_u64()?),
                "items" => fast.items = Some(Box::new(SubsetChecker::compile(value)?)),
                "properties" => {
                    for (name, sub) in value.as_object()? {
                        fast.properties.push(Property {
                            tag: NameTag::of(name),
                            bit: 0,
                            name: name.clone(),
                            schema: SubsetChecker::compile(sub)?,
                        });
                    }
                }
                "required" => required = string_list(value)?,
                "additionalProperties" => fast.closed = !value.as_bool()?,
                k if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        required.sort();
        required.dedup();
        if required.len() > 64 {
            return None;
        }
        for (i, name) in required.into_iter().enumerate() {
            let bit = 1u64 << i;
            fast.required_mask |= bit;
            match fast.properties.iter_mut().find(|p| p.name == name) {
                Some(p) => p.bit = bit,
                None => fast.required_elsewhere.push((name, bit)),
            }
        }
        // Both bounds of one side given (`minimum` and `exclusiveMinimum`): left to jsonschema.
        let sides = ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"];
        if map.contains_key(sides[0]) && map.contains_key(sides[1])
            || map.contains_key(sides[2]) && map.contains_key(sides[3])
        {
            return None;
        }
        fast.integer_range = integer_range(fast.minimum, fast.maximum);
        Some(fast)
    }

    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        if let Some(types) = self.types {
            if type_of(value) & types == 0 {
                return false;
            }
        }
        for allowed in &self.allowed {
            let found = match value {
                Value::String(s) => allowed.iter().any(|a| a.as_deref() == Some(s)),
                Value::Null => allowed.contains(&None),
                _ => false,
            };
            if !found {
                return false;
            }
        }
        match value {
            Value::Number(n) => self.number_ok(n),
            Value::String(s) => self.length_ok(s),
            Value::Array(items) => self.items_ok(items),
            Value::Object(map) => self.object_ok(map),
            Value::Null | Value::Bool(_) => true,
        }
    }

    fn number_ok(&self, n: &Number) -> bool {
        self.bounds_ok(Bound::of(n))
    }

    pub(super) fn bounds_ok(&self, n: Bound) -> bool {
        if self.minimum.is_none() && self.maximum.is_none() {
            return true;
        }
        let above = self
            .minimum
            .as_ref()
            .is_none_or(|(min, exclusive)| match n.compare(min) {
                Ordering::Greater => true,
                Ordering::Equal => !exclusive,
                Ordering::Less => false,
            });
        let below = self
            .maximum
            .as_ref()
            .is_none_or(|(max, exclusive)| match n.compare(max) {
                Ordering::Less => true,
                Ordering::Equal => !exclusive,
                Ordering::Greater => false,
            });
        above && below
    }

    pub(super) fn length_ok(&self, s: &str) -> bool {
        if self.min_length.is_none() && self.max_length.is_none() {
            return true;
        }
        let len = s.chars().count() as u64;
        self.min_length.is_none_or(|min| len >= min) && self.max_length.is_none_or(|max| len <= max)
    }

    fn items_ok(&self, items: &[Value]) -> bool {
        let len = items.len() as u64;
        self.min_items.is_none_or(|min| len >= min)
            && self.max_items.is_none_or(|max| len <= max)
            && self
                .items
                .as_ref()
                .is_none_or(|schema| items.iter().all(|item| schema.is_valid(item)))
    }

    /// One pass over the instance's keys; required properties are ticked off in a bitmask, so
    /// no key is hashed.
    fn object_ok(&self, map: &Map<String, Value>) -> bool {
        let mut seen = 0u64;
        for (key, value) in map {
            let (bit, schema) = self.property(key);
            match schema {
                Some(schema) if !schema.is_valid(value) => return false,
                None if self.closed => return false,
                _ => seen |= bit,
            }
        }
        self.has_required(seen)
    }

    /// The required-mask bit of a name required but not among the properties; 0 for others.
    fn bit_elsewhere(&self, key: &str) -> u64 {
        self.required_elsewhere
            .iter()
            .find(|(name, _)| name == key)
            .map_or(0, |(_, bit)| *bit)
    }
}

/// A property of an object schema.
#[derive(Debug)]
struct Property {
    tag: NameTag,
    /// Its bit in the required mask; 0 when it is not required.
    bit: u64,
    name: String,
    schema: SubsetChecker,
}

/// A name's length and first eight bytes: equal tags mean equal names up to eight bytes, and
/// for longer names leave only the rest to compare.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct NameTag {
    len: usize,
    head: u64,
}

impl NameTag {
    #[inline]
    fn of(name: &str) -> NameTag {
        let bytes = name.as_bytes();
        let head = match bytes.first_chunk::<8>() {
            Some(first) => u64::from_le_bytes(*first),
            None => bytes
                .iter()
                .rev()
                .fold(0, |head, &b| head << 8 | u64::from(b)),
        };
        NameTag {
            len: bytes.len(),
            head,
        }
    }
}

/// The schema of a property an open object does not describe: anything goes.
pub(super) static ANYTHING: SubsetChecker = SubsetChecker::anything();

/// What validation while deserializing asks of a schema, one token at a time.
impl SubsetChecker {
    fn admits_type(&self, kind: u8) -> bool {
        self.types.is_none_or(|types| types & kind != 0)
    }

    /// Whether a value of this kind (a boolean, a number, an array or an object) can pass the
    /// type and the allowed-values keywords, which only name strings and nulls.
    pub(super) fn admits_kind(&self, kind: u8) -> bool {
        self.admits_type(kind) && self.allowed.is_empty()
    }

    pub(super) fn admits_null(&self) -> bool {
        self.admits_type(NULL) && self.allowed.iter().all(|set| set.contains(&None))
    }

    pub(super) fn admits_string(&self, s: &str) -> bool {
        self.admits_type(STRING)
            && self
                .allowed
                .iter()
                .all(|set| set.iter().any(|a| a.as_deref() == Some(s)))
            && self.length_ok(s)
    }

    #[inline]
    pub(super) fn admits_number(&self, kind: u8, n: Bound) -> bool {
        self.admits_kind(kind)
            && match (n, self.integer_range) {
                (Bound::Integer(n), Some((low, high))) => low <= n && n <= high,
                _ => self.bounds_ok(n),
            }
    }

    /// A key's bit in the required mask (0 when optional) and its schema; `None` for a key that
    /// is not among the properties, and so refused when the object is closed.
    #[inline]
    pub(super) fn property(&self, key: &str) -> (u64, Option<&SubsetChecker>) {
        let tag = NameTag::of(key);
        let rest = key.as_bytes().get(8..).unwrap_or_default();
        let found = self.properties.iter().find(|p| {
            // Names of eight bytes or fewer are all in the tag; longer ones compare the rest.
            p.tag == tag && (rest.is_empty() || p.name.as_bytes()[8..] == *rest)
        });
        match found {
            Some(p) => (p.bit, Some(&p.schema)),
            None => (self.bit_elsewhere(key), None),
        }
    }

    /// Whether properties not listed are refused.
    pub(super) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether the keys seen (as a mask of their bits) include every required one.
    pub(super) fn has_required(&self, seen: u64) -> bool {
        seen == self.required_mask
    }

    /// The schema every item must pass.
    pub(super) fn item_schema(&self) -> &SubsetChecker {
        self.items.as_deref().unwrap_or(&ANYTHING)
    }

    pub(super) fn item_count_ok(&self, len: u64) -> bool {
        self.min_items.is_none_or(|min| len >= min) && self.max_items.is_none_or(|max| len <= max)
    }
}

/// Integer bounds as one inclusive range; `None` when either bound is a float.
fn integer_range(
    minimum: Option<(Bound, bool)>,
    maximum: Option<(Bound, bool)>,
) -> Option<(i128, i128)> {
    let low = match minimum {
        None => i128::MIN,
        Some((Bound::Integer(min), exclusive)) => min.checked_add(i128::from(exclusive))?,
        Some((Bound::Float(_), _)) => return None,
    };
    let high = match maximum {
        None => i128::MAX,
        Some((Bound::Integer(max), exclusive)) => max.checked_sub(i128::from(exclusive))?,
        Some((Bound::Float(_), _)) => return None,
    };
    Some((low, high))
}

/// The set of types a `type` keyword names.
pub(super) fn type_set(value: &Value) -> Option<u8> {
    let one = |name: &str| match name {
        "null" => Some(NULL),
        "boolean" => Some(BOOLEAN),
        "integer" => Some(INTEGER),
        "number" => Some(NUMBER | INTEGER),
        "string" => Some(STRING),
        "array" => Some(ARRAY),
        "object" => Some(OBJECT),
        _ => None,
    };
    match value {
        Value::String(name) => one(name),
        Value::Array(names) => names
            .iter()
            .try_fold(0, |set, name| Some(set | one(name.as_str()?)?)),
        _ => None,
    }
}

fn string_list(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn strings_or_nulls(value: &Value) -> Option<Vec<Option<String>>> {
    value
        .as_array()?
        .iter()
        .map(|v| match v {
            Value::String(s) => Some(Some(s.clone())),
            Value::Null => Some(None),
            _ => None,
        })
        .collect()
}

/// A type set in words, for messages: "an integer", "a string or null".
pub(super) fn type_words(types: u8) -> String {
    let names = [
        (STRING, "a string"),
        (NUMBER, "a number"),
        (INTEGER, "an integer"),
        (BOOLEAN, "a boolean"),
        (ARRAY, "an array"),
        (OBJECT, "an object"),
        (NULL, "null"),
    ];
    let words: Vec<&str> = names
        .iter()
        // "number" admits integers: it is named alone.
        .filter(|(kind, _)| types & kind != 0 && !(*kind == INTEGER && types & NUMBER != 0))
        .map(|(_, name)| *name)
        .collect();
    match words.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "of any type".to_owned(),
    }
}

/// The type of a value, as one bit of a type set.
pub(super) fn type_of(value: &Value) -> u8 {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(n) if is_integer(n) => INTEGER,
        Value::Number(_) => NUMBER,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

/// An integer as serde's integer types take one: written without a fraction or an exponent,
/// and within 64 bits. `1.0` and `1e3` are numbers only (JSON Schema would count them).
fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64()
}

/// A JSON number ready to compare: exact when it is an integer.
#[derive(Debug, Clone, Copy)]
pub(super) enum Bound {
    Integer(i128),
    Float(f64),
}

impl Bound {
    fn of(n: &Number) -> Bound {
        match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Bound::Integer(i.into()),
            (None, Some(u)) => Bound::Integer(u.into()),
            (None, None) => Bound::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// Exact, as `jsonschema` compares: an integer is not rounded to a float to meet one
    /// (`10000000000000000001` is above `1e19`). A NaN compares as less.
    fn compare(self, other: &Bound) -> Ordering {
        match (self, *other) {
            (Bound::Float(f), _) | (_, Bound::Float(f)) if f.is_nan() => Ordering::Less,
            (Bound::Integer(a), Bound::Integer(b)) => a.cmp(&b),
            (Bound::Integer(a), Bound::Float(b)) => integer_to_float(a, b),
            (Bound::Float(a), Bound::Integer(b)) => integer_to_float(b, a).reverse(),
            (Bound::Float(a), Bound::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Less),
        }
    }
}

/// `integer` against `float` (not NaN), exactly.
fn integer_to_float(integer: i128, float: f64) -> Ordering {
    // 2^127: every i128 is below it, and at or above -2^127.
    const EDGE: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if float >= EDGE {
        return Ordering::Less;
    }
    if float < -EDGE {
        return Ordering::Greater;
    }
    let whole = float.trunc();
    // In range and without a fraction: the cast is exact.
    match integer.cmp(&(whole as i128)) {
        Ordering::Equal => 0.0_f64
            .partial_cmp(&(float - whole))
            .unwrap_or(Ordering::Less),
        unequal => unequal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_integer_meets_a_float_bound_exactly() {
        let bound = |text: &str| Bound::of(&serde_json::from_str::<Number>(text).unwrap());
        let order = |a: &str, b: &str| bound(a).compare(&bound(b));
        // As floats, both sides would be 1e19 and 2^53.
        assert_eq!(order("10000000000000000001", "1e19"), Ordering::Greater);
        assert_eq!(
            order("9007199254740993", "9007199254740992.0"),
            Ordering::Greater
        );
        assert_eq!(
            order("9007199254740992.0", "9007199254740993"),
            Ordering::Less
        );
        assert_eq!(order("3", "2.5"), Ordering::Greater);
        assert_eq!(order("-3", "-2.5"), Ordering::Less);
        assert_eq!(order("-2", "-2.5"), Ordering::Greater);
        assert_eq!(order("5", "5.0"), Ordering::Equal);
        assert_eq!(order("-9223372036854775808", "-1e300"), Ordering::Greater);
        assert_eq!(order("18446744073709551615", "1e300"), Ordering::Less);
        assert_eq!(order("1.5", "2.5"), Ordering::Less);
    }

    use crate::arguments::random::{instance, schema, Rng};

    #[test]
    fn agrees_with_jsonschema_on_random_schemas_and_instances() {
        let mut rng = Rng(0x5eed_1234_abcd_9876);
        let mut compared = 0;
        for _ in 0..3_000 {
            let schema = schema(&mut rng, 2);
            let fast =
                SubsetChecker::compile(&schema).expect("generated schemas are in the subset");
            let reference =
                crate::arguments::full::validator_for(&schema).expect("generated schemas compile");
            for _ in 0..20 {
                let value = instance(&mut rng, 2);
                assert_eq!(
                    fast.is_valid(&value),
                    reference.is_valid(&value),
                    "schema {schema}\ninstance {value}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 60_000);
    }

    #[test]
    fn leaves_schemas_outside_the_subset_to_jsonschema() {
        for schema in [
            json!({ "anyOf": [{ "type": "string" }] }),
            json!({ "type": "string", "pattern": "^a" }),
            json!({ "type": "string", "format": "date-time" }),
            json!({ "enum": [1, 2] }),
            json!({ "enum": ["a", true] }),
            json!({ "$ref": "#/$defs/A" }),
            json!({ "properties": { "a": { "uniqueItems": true } } }),
            json!({ "minimum": 1, "exclusiveMinimum": 0 }),
        ] {
            assert!(SubsetChecker::compile(&schema).is_none(), "{schema}");
        }
    }

    #[test]
    fn counts_characters_not_bytes() {
        let fast = SubsetChecker::compile(&json!({ "type": "string", "maxLength": 3 })).unwrap();
        assert!(fast.is_valid(&json!("日本語")));
        assert!(!fast.is_valid(&json!("日本語!")));
    }
}
