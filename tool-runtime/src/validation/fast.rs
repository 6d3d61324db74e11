//! A checker compiled from the subset of JSON Schema that generated tool schemas mostly use,
//! decided in a few nanoseconds per property.
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

#[derive(Debug)]
pub(crate) struct FastSchema {
    types: Option<u8>,
    /// Sets of allowed strings or nulls (`enum`, `const`); a value must be in every one.
    allowed: Vec<Vec<Option<String>>>,
    minimum: Option<(Bound, bool)>,
    maximum: Option<(Bound, bool)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    items: Option<Box<FastSchema>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    properties: Vec<(String, FastSchema)>,
    /// For each property, its bit in the required mask (0 when not required).
    required_bits: Vec<u64>,
    /// All required properties' bits.
    required_mask: u64,
    /// Required names that are not among `properties`, checked by lookup.
    required_elsewhere: Vec<String>,
    closed: bool,
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const INTEGER: u8 = 4;
const NUMBER: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;

impl FastSchema {
    /// The checker for `schema`, or `None` when it uses anything outside the subset.
    pub(crate) fn compile(schema: &Value) -> Option<FastSchema> {
        let map = schema.as_object()?;
        let mut fast = FastSchema {
            types: None,
            allowed: Vec::new(),
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            items: None,
            min_items: None,
            max_items: None,
            properties: Vec::new(),
            required_bits: Vec::new(),
            required_mask: 0,
            required_elsewhere: Vec::new(),
            closed: false,
        };
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
                "items" => fast.items = Some(Box::new(FastSchema::compile(value)?)),
                "properties" => {
                    for (name, sub) in value.as_object()? {
                        fast.properties
                            .push((name.clone(), FastSchema::compile(sub)?));
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
        fast.required_bits = vec![0; fast.properties.len()];
        for name in required {
            match fast.properties.iter().position(|(p, _)| *p == name) {
                Some(i) if fast.required_mask.count_ones() < 64 => {
                    let bit = 1u64 << fast.required_mask.count_ones();
                    fast.required_bits[i] = bit;
                    fast.required_mask |= bit;
                }
                _ => fast.required_elsewhere.push(name),
            }
        }
        // Both bounds of one side given (`minimum` and `exclusiveMinimum`): left to jsonschema.
        let sides = ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"];
        if map.contains_key(sides[0]) && map.contains_key(sides[1])
            || map.contains_key(sides[2]) && map.contains_key(sides[3])
        {
            return None;
        }
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
        if self.minimum.is_none() && self.maximum.is_none() {
            return true;
        }
        let n = Bound::of(n);
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

    fn length_ok(&self, s: &str) -> bool {
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
            match self.properties.iter().position(|(name, _)| name == key) {
                Some(i) => {
                    if !self.properties[i].1.is_valid(value) {
                        return false;
                    }
                    seen |= self.required_bits[i];
                }
                None if self.closed => return false,
                None => {}
            }
        }
        seen == self.required_mask
            && self
                .required_elsewhere
                .iter()
                .all(|name| map.contains_key(name))
    }
}

fn type_set(value: &Value) -> Option<u8> {
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

fn type_of(value: &Value) -> u8 {
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

/// An integer in JSON Schema's sense: no fractional part, so `1.0` counts.
fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// A JSON number ready to compare: exact when it is an integer.
#[derive(Debug, Clone, Copy)]
enum Bound {
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

    /// Exact between integers, as floats otherwise.
    fn compare(self, other: &Bound) -> Ordering {
        match (self, *other) {
            (Bound::Integer(a), Bound::Integer(b)) => a.cmp(&b),
            (a, b) => a
                .as_f64()
                .partial_cmp(&b.as_f64())
                .unwrap_or(Ordering::Less),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Bound::Integer(i) => i as f64,
            Bound::Float(f) => f,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A small deterministic generator, so a failure can be replayed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }
        fn pick<T: Clone>(&mut self, items: &[T]) -> T {
            items[self.below(items.len())].clone()
        }
    }

    fn numbers() -> Vec<Value> {
        vec![
            json!(0),
            json!(-1),
            json!(1),
            json!(2.5),
            json!(-1.5),
            json!(1.0),
            json!(10),
            json!(i64::MAX),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(9_223_372_036_854_775_808u64),
            json!(1e300),
            json!(-0.0),
            json!(255),
            json!(256),
        ]
    }

    const STRINGS: &[&str] = &["", "a", "é", "ab", "abcdef", "Room", "Bike", "日本語"];
    const NAMES: &[&str] = &["a", "b", "c"];

    fn schema(rng: &mut Rng, depth: u32) -> Value {
        let mut map = Map::new();
        if rng.chance(70) {
            let all = [
                "null", "boolean", "integer", "number", "string", "array", "object",
            ];
            let mut types: Vec<&str> = (0..1 + rng.below(2)).map(|_| rng.pick(&all)).collect();
            types.dedup();
            map.insert(
                "type".into(),
                if types.len() == 1 {
                    json!(types[0])
                } else {
                    json!(types)
                },
            );
        }
        if rng.chance(15) {
            let mut values: Vec<Value> = (0..1 + rng.below(3))
                .map(|_| json!(rng.pick(STRINGS)))
                .collect();
            if rng.chance(30) {
                values.push(Value::Null);
            }
            map.insert("enum".into(), Value::Array(values));
        }
        if rng.chance(5) {
            map.insert("const".into(), json!(rng.pick(STRINGS)));
        }
        for side in [
            ["minimum", "exclusiveMinimum"],
            ["maximum", "exclusiveMaximum"],
        ] {
            if rng.chance(25) {
                map.insert(rng.pick(&side).into(), rng.pick(&numbers()));
            }
        }
        for keyword in ["minLength", "maxLength", "minItems", "maxItems"] {
            if rng.chance(15) {
                map.insert(keyword.into(), json!(rng.below(4)));
            }
        }
        if depth > 0 && rng.chance(30) {
            map.insert("items".into(), schema(rng, depth - 1));
        }
        if depth > 0 && rng.chance(40) {
            let mut properties = Map::new();
            for name in NAMES {
                if rng.chance(60) {
                    properties.insert((*name).into(), schema(rng, depth - 1));
                }
            }
            map.insert("properties".into(), Value::Object(properties));
            let required: Vec<&str> = NAMES.iter().copied().filter(|_| rng.chance(40)).collect();
            map.insert("required".into(), json!(required));
            if rng.chance(50) {
                map.insert("additionalProperties".into(), json!(rng.chance(30)));
            }
        }
        if rng.chance(10) {
            map.insert("description".into(), json!("annotation only"));
        }
        Value::Object(map)
    }

    fn instance(rng: &mut Rng, depth: u32) -> Value {
        match rng.below(if depth == 0 { 4 } else { 6 }) {
            0 => Value::Null,
            1 => json!(rng.chance(50)),
            2 => rng.pick(&numbers()),
            3 => json!(rng.pick(STRINGS)),
            4 => Value::Array(
                (0..rng.below(4))
                    .map(|_| instance(rng, depth - 1))
                    .collect(),
            ),
            _ => {
                let mut map = Map::new();
                for name in ["a", "b", "c", "d"] {
                    if rng.chance(50) {
                        map.insert(name.into(), instance(rng, depth - 1));
                    }
                }
                Value::Object(map)
            }
        }
    }

    #[test]
    fn agrees_with_jsonschema_on_random_schemas_and_instances() {
        let mut rng = Rng(0x5eed_1234_abcd_9876);
        let mut compared = 0;
        for _ in 0..3_000 {
            let schema = schema(&mut rng, 2);
            let fast = FastSchema::compile(&schema).expect("generated schemas are in the subset");
            let reference = jsonschema::validator_for(&schema).expect("generated schemas compile");
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
            assert!(FastSchema::compile(&schema).is_none(), "{schema}");
        }
    }

    #[test]
    fn counts_characters_not_bytes() {
        let fast = FastSchema::compile(&json!({ "type": "string", "maxLength": 3 })).unwrap();
        assert!(fast.is_valid(&json!("日本語")));
        assert!(!fast.is_valid(&json!("日本語!")));
    }
}
