//! Random schemas in the fast subset and random instances, for the differential tests.

use serde_json::{json, Map, Value};

/// A small deterministic generator, so a failure can be replayed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub(crate) fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

pub(crate) fn numbers() -> Vec<Value> {
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
/// Property names: short ones, one of exactly eight bytes, and a longer one sharing its first
/// eight bytes.
const NAMES: &[&str] = &["a", "b", "property", "property_b"];
/// Object keys: the names, and some that are not among them (one shares a long name's length
/// and first eight bytes).
const KEYS: &[&str] = &["a", "b", "d", "property", "property_b", "property_x"];

pub(crate) fn schema(rng: &mut Rng, depth: u32) -> Value {
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

pub(crate) fn instance(rng: &mut Rng, depth: u32) -> Value {
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
            for name in KEYS {
                if rng.chance(50) {
                    map.insert((*name).into(), instance(rng, depth - 1));
                }
            }
            Value::Object(map)
        }
    }
}
