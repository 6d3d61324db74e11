//! The Validating stage: a wrapper around any serde `Deserializer` that checks each token
//! against a [`SubsetChecker`] as it passes on its way into the argument struct.
//!
//! A valid call is checked and deserialized in one walk, with no intermediate `Value` and no
//! second pass. The walk only ever gives up: on a violation, on anything it cannot follow (a
//! map key the target wants as a number, bytes, an enum that is not a string), and on any error
//! of serde's own, it returns an error, and the caller runs the Full stage (`jsonschema`, then
//! `serde_json::from_value`), which says what is wrong. So its answer on success must be the
//! Full stage's answer, which holds because every token of the input passes through here exactly
//! once: values a struct ignores are walked too, and each token is counted in the size budget
//! (numbers at their most room, so a call near the cap is counted again by the Full stage).

use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, StrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::budget::{ArgumentLimits, Budget, NUMBER_ROOM};
use super::subset::{Bound, SubsetChecker, ANYTHING, ARRAY, BOOLEAN, INTEGER, NUMBER, OBJECT};

/// Checks and deserializes a value in one walk, counting it against the limits. `None` when
/// the value is not valid, or anything else stopped the walk: the Full stage then says why.
#[inline]
pub(super) fn parse_value<T: DeserializeOwned>(
    schema: &SubsetChecker,
    args: &Value,
    limits: ArgumentLimits,
) -> Option<T> {
    let budget = Budget::new(limits);
    T::deserialize(Checked::new(args, schema, &budget)).ok()
}

/// Checks and deserializes JSON text (already within the size cap) in one walk, counting its
/// nesting against the limits; `None` as for [`parse_value`].
#[inline]
pub(super) fn parse_text<T: DeserializeOwned>(
    schema: &SubsetChecker,
    text: &str,
    limits: ArgumentLimits,
) -> Option<T> {
    let budget = Budget::new(ArgumentLimits {
        bytes: usize::MAX,
        ..limits
    });
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = T::deserialize(Checked::new(&mut deserializer, schema, &budget)).ok()?;
    deserializer.end().ok()?;
    Some(parsed)
}

/// Why the walk gave up; the Full stage says why in words.
fn give_up<E: de::Error>() -> E {
    E::custom("not valid against the schema")
}

/// Checks a string (counted with its quotes).
fn check_string<E: de::Error>(schema: &SubsetChecker, budget: &Budget, s: &str) -> Result<(), E> {
    check(budget.add(s.len() + 2) && schema.admits_string(s))
}

fn check<E: de::Error>(ok: bool) -> Result<(), E> {
    if ok {
        Ok(())
    } else {
        Err(give_up())
    }
}

/// A deserializer whose every value is checked against `schema`.
pub(crate) struct Checked<'s, D> {
    inner: D,
    schema: &'s SubsetChecker,
    budget: &'s Budget,
}

impl<'s, D> Checked<'s, D> {
    pub(crate) fn new(inner: D, schema: &'s SubsetChecker, budget: &'s Budget) -> Self {
        Checked {
            inner,
            schema,
            budget,
        }
    }

    fn visitor<V>(&self, inner: V) -> CheckedVisitor<'s, V> {
        CheckedVisitor {
            inner,
            schema: self.schema,
            budget: self.budget,
        }
    }
}

/// Methods that wrap the visitor and hand everything else on as it came.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(
            self,
            $($arg: $ty,)*
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let visitor = self.visitor(visitor);
            self.inner.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checked<'_, D> {
    type Error = D::Error;

    forward! {
        deserialize_any() deserialize_bool() deserialize_i8() deserialize_i16() deserialize_i32()
        deserialize_i64() deserialize_i128() deserialize_u8() deserialize_u16() deserialize_u32()
        deserialize_u64() deserialize_u128() deserialize_f32() deserialize_f64()
        deserialize_char() deserialize_str() deserialize_string() deserialize_bytes()
        deserialize_byte_buf() deserialize_option() deserialize_unit() deserialize_seq()
        deserialize_map() deserialize_identifier()
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_struct(name: &'static str, fields: &'static [&'static str])
    }

    /// A value the target ignores is still walked, so it is still checked.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_any(visitor)
    }

    /// Only enums of strings (unit variants) are followed: the string is checked, then handed to
    /// the target as its variant. Whatever else comes is left to the Full stage.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = UnitVariantVisitor {
            inner: visitor,
            schema: self.schema,
            budget: self.budget,
        };
        self.inner.deserialize_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Checks each token it is shown, then passes it on to the target's visitor.
struct CheckedVisitor<'s, V> {
    inner: V,
    schema: &'s SubsetChecker,
    budget: &'s Budget,
}

impl<'s, V> CheckedVisitor<'s, V> {
    fn number<E: de::Error>(&self, n: Bound, kind: u8) -> Result<(), E> {
        check(self.budget.add(NUMBER_ROOM) && self.schema.admits_number(kind, n))
    }

    fn string<E: de::Error>(&self, s: &str) -> Result<(), E> {
        check_string(self.schema, self.budget, s)
    }

    fn null<E: de::Error>(&self) -> Result<(), E> {
        check(self.budget.add(4) && self.schema.admits_null())
    }

    fn nested<D>(&self, inner: D) -> Checked<'s, D> {
        Checked::new(inner, self.schema, self.budget)
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for CheckedVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        check(self.budget.add(4 + usize::from(!v)) && self.schema.admits_kind(BOOLEAN))?;
        self.inner.visit_bool(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.number(Bound::Integer(v.into()), INTEGER)?;
        self.inner.visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.number(Bound::Integer(v.into()), INTEGER)?;
        self.inner.visit_u64(v)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
        self.number(Bound::Integer(v), INTEGER)?;
        self.inner.visit_i128(v)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
        let n = i128::try_from(v).map_err(|_| give_up())?;
        self.number(Bound::Integer(n), INTEGER)?;
        self.inner.visit_u128(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        // A number written with a fraction or an exponent (`1.0`, `1e3`) is not an integer
        // here, as serde's integer types do not take it either.
        self.number(Bound::Float(v), NUMBER)?;
        self.inner.visit_f64(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.string(v)?;
        self.inner.visit_str(v)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.string(v)?;
        self.inner.visit_borrowed_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.string(&v)?;
        self.inner.visit_string(v)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.null()?;
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.null()?;
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let nested = self.nested(deserializer);
        self.inner.visit_some(nested)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        let nested = self.nested(deserializer);
        self.inner.visit_newtype_struct(nested)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        check(self.budget.add(2) && self.schema.admits_kind(ARRAY) && self.budget.enter())?;
        let mut items = CheckedSeq {
            inner: seq,
            schema: self.schema.item_schema(),
            budget: self.budget,
            count: 0,
        };
        let value = self.inner.visit_seq(&mut items)?;
        self.budget.leave();
        check(self.schema.item_count_ok(items.count))?;
        Ok(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        check(self.budget.add(2) && self.schema.admits_kind(OBJECT) && self.budget.enter())?;
        let mut entries = CheckedMap {
            inner: map,
            state: MapState {
                schema: self.schema,
                budget: self.budget,
                seen: 0,
                count: 0,
                value_schema: &ANYTHING,
            },
        };
        let value = self.inner.visit_map(&mut entries)?;
        self.budget.leave();
        check(self.schema.has_required(entries.state.seen))?;
        Ok(value)
    }
}

/// The items of an array, each checked against the item schema.
struct CheckedSeq<'s, A> {
    inner: A,
    schema: &'s SubsetChecker,
    budget: &'s Budget,
    count: u64,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CheckedSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let seed = CheckedSeed {
            inner: seed,
            schema: self.schema,
            budget: self.budget,
        };
        let item = self.inner.next_element_seed(seed)?;
        if item.is_some() {
            // A comma before every item but the first.
            check(self.count == 0 || self.budget.add(1))?;
            self.count += 1;
        }
        Ok(item)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A seed whose value is checked against `schema`.
struct CheckedSeed<'s, T> {
    inner: T,
    schema: &'s SubsetChecker,
    budget: &'s Budget,
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckedSeed<'_, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Value, D::Error> {
        self.inner
            .deserialize(Checked::new(deserializer, self.schema, self.budget))
    }
}

/// An object's entries: each key is looked up among the schema's properties, each value is
/// checked against its property's schema, and the required properties are ticked off.
struct CheckedMap<'s, A> {
    inner: A,
    state: MapState<'s>,
}

struct MapState<'s> {
    schema: &'s SubsetChecker,
    budget: &'s Budget,
    /// The required properties seen, as a mask of their bits.
    seen: u64,
    count: usize,
    /// The schema of the value after the key just read.
    value_schema: &'s SubsetChecker,
}

impl MapState<'_> {
    #[inline]
    fn key(&mut self, key: &str) -> bool {
        let separators = 3 + usize::from(self.count > 0);
        self.count += 1;
        if !self.budget.add(key.len() + separators) {
            return false;
        }
        let (bit, schema) = self.schema.property(key);
        self.seen |= bit;
        self.value_schema = schema.unwrap_or(&ANYTHING);
        schema.is_some() || !self.schema.is_closed()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CheckedMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.inner.next_key_seed(KeySeed {
            inner: seed,
            state: &mut self.state,
        })
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(CheckedSeed {
            inner: seed,
            schema: self.state.value_schema,
            budget: self.state.budget,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// Reads an object key as the text it is, whatever the target makes of it.
struct KeySeed<'m, 's, K> {
    inner: K,
    state: &'m mut MapState<'s>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, '_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        self.inner.deserialize(KeyDeserializer {
            inner: deserializer,
            state: self.state,
        })
    }
}

struct KeyDeserializer<'m, 's, D> {
    inner: D,
    state: &'m mut MapState<'s>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyDeserializer<'_, '_, D> {
    type Error = D::Error;

    /// Every key is read as what it is, text; a target that wanted something else (a number
    /// parsed out of the key) refuses the text, and the Full stage takes over.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(KeyVisitor {
            inner: visitor,
            state: self.state,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Sees a key's text, looks it up among the properties, and hands it on.
struct KeyVisitor<'m, 's, V> {
    inner: V,
    state: &'m mut MapState<'s>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        check(self.state.key(v))?;
        self.inner.visit_str(v)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        check(self.state.key(v))?;
        self.inner.visit_borrowed_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        check(self.state.key(&v))?;
        self.inner.visit_string(v)
    }
}

/// A unit variant from its string: checked, then handed to the target's enum visitor. Anything
/// but a string is refused by serde's default visitor methods, and the Full stage takes over.
struct UnitVariantVisitor<'s, V> {
    inner: V,
    schema: &'s SubsetChecker,
    budget: &'s Budget,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for UnitVariantVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        check_string::<E>(self.schema, self.budget, v)?;
        self.inner.visit_enum(StrDeserializer::new(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        check_string::<E>(self.schema, self.budget, v)?;
        self.inner.visit_enum(BorrowedStrDeserializer::new(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        check_string::<E>(self.schema, self.budget, &v)?;
        self.inner.visit_enum(StringDeserializer::new(v))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{json, Value};

    use super::{parse_text, parse_value};
    use crate::arguments::budget::{ArgumentLimits, NESTING_LIMIT};

    const UNLIMITED: ArgumentLimits = ArgumentLimits {
        bytes: usize::MAX,
        depth: NESTING_LIMIT,
    };
    use crate::arguments::budget::encoded_size_over;
    use crate::arguments::full::validator_for;
    use crate::arguments::random::{instance, schema, Rng};
    use crate::arguments::subset::SubsetChecker;

    /// The walk accepts exactly what `jsonschema` and the size cap accept, and deserializes it
    /// to what `serde_json` makes of it: from a value and from text, under random size limits.
    #[test]
    fn agrees_with_the_full_path_on_random_schemas_and_instances() {
        let mut rng = Rng(0x0f05_ed00_5eed_4321);
        let mut accepted = 0;
        for _ in 0..3_000 {
            let schema = schema(&mut rng, 2);
            let compiled = SubsetChecker::compile(&schema).expect("generated schemas are in it");
            let reference = validator_for(&schema).expect("generated schemas compile");
            for _ in 0..20 {
                let value = instance(&mut rng, 2);
                let valid = reference.is_valid(&value);
                let size = serde_json::to_string(&value).unwrap().len();
                let limit = match rng.below(4) {
                    0 => size,
                    1 => size.saturating_sub(1),
                    2 => rng.below(size + 1),
                    _ => usize::MAX,
                };
                let fits = encoded_size_over(&value, limit).is_none();
                let from_value: Option<Value> =
                    parse_value(&compiled, &value, ArgumentLimits::new(limit, NESTING_LIMIT));
                // Accepted only when the Full stage accepts, and then always without a limit.
                if let Some(parsed) = from_value {
                    assert!(
                        valid && fits,
                        "schema {schema}\ninstance {value}\nlimit {limit}"
                    );
                    assert_eq!(parsed, value);
                    accepted += 1;
                }
                let unlimited: Option<Value> = parse_value(&compiled, &value, UNLIMITED);
                assert_eq!(
                    unlimited.is_some(),
                    valid,
                    "schema {schema}\ninstance {value}"
                );
                let from_text: Option<Value> = parse_text(&compiled, &value.to_string(), UNLIMITED);
                assert_eq!(
                    from_text.is_some(),
                    valid,
                    "schema {schema}\ninstance {value}"
                );
                if let Some(parsed) = from_text {
                    assert_eq!(parsed, value);
                }
            }
        }
        assert!(accepted > 5_000, "only {accepted} instances were valid");
    }

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    enum Category {
        Room,
        Bike,
        Plane,
    }

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    struct Typed {
        nullable_but_required: Option<String>,
        #[schemars(length(max = 10))]
        max_length_10: String,
        kind: Category,
        #[schemars(length(min = 2, max = 5))]
        categories: Vec<Category>,
        #[serde(default)]
        maybe: Option<Category>,
        #[schemars(range(min = 1, max = 9))]
        count: u8,
    }

    /// Into a typed struct, the walk says yes only when the Full stage does, and gives the same
    /// struct: for every combination of valid and invalid field values.
    #[test]
    fn a_typed_target_gets_what_the_full_path_gives() {
        let schema = tool_core::schema::canonical_for::<Typed>().unwrap();
        let compiled = SubsetChecker::compile(&schema).unwrap();
        let reference = validator_for(&schema).unwrap();
        let choices: [(&str, Vec<Option<Value>>); 6] = [
            (
                "nullable_but_required",
                vec![Some(json!(null)), Some(json!("x")), Some(json!(1)), None],
            ),
            (
                "max_length_10",
                vec![Some(json!("short")), Some(json!("far too long here")), None],
            ),
            (
                "kind",
                vec![
                    Some(json!("Room")),
                    Some(json!("Boat")),
                    Some(json!({"Room": null})),
                    Some(json!(null)),
                ],
            ),
            (
                "categories",
                vec![
                    Some(json!(["Bike", "Plane"])),
                    Some(json!(["Bike"])),
                    Some(json!(["Bike", 3])),
                    Some(json!("Bike")),
                ],
            ),
            (
                "maybe",
                vec![
                    None,
                    Some(json!(null)),
                    Some(json!("Plane")),
                    Some(json!("plane")),
                ],
            ),
            (
                "count",
                vec![
                    Some(json!(3)),
                    Some(json!(0)),
                    Some(json!(300)),
                    Some(json!(3.0)),
                    Some(json!(-1)),
                ],
            ),
        ];
        let mut combinations = vec![serde_json::Map::new()];
        for (name, values) in &choices {
            combinations = combinations
                .into_iter()
                .flat_map(|map| {
                    values.iter().map(move |value| {
                        let mut map = map.clone();
                        if let Some(value) = value {
                            map.insert((*name).to_owned(), value.clone());
                        }
                        map
                    })
                })
                .collect();
        }
        let mut accepted = 0;
        for (i, map) in combinations.into_iter().enumerate() {
            let mut value = Value::Object(map);
            if i % 7 == 0 {
                value["extra"] = json!(true);
            }
            let full = reference
                .is_valid(&value)
                .then(|| serde_json::from_value::<Typed>(value.clone()).ok())
                .flatten();
            let from_value: Option<Typed> = parse_value(&compiled, &value, UNLIMITED);
            let from_text: Option<Typed> = parse_text(&compiled, &value.to_string(), UNLIMITED);
            assert_eq!(from_value, full, "{value}");
            assert_eq!(from_text, full, "{value}");
            accepted += usize::from(full.is_some());
        }
        assert!(accepted >= 4, "only {accepted} combinations were valid");
    }
}
