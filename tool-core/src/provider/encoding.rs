//! What the strict profiles write differently from the canonical schema, and how to turn it back.
//!
//! Two places have no strict form as they are, and are rewritten so that the tool stays strict:
//! - An object with no properties of its own and any keys (a map: `{"type": "object"}`,
//!   `additionalProperties: {..}`) is written as an array of `{"key", "value"}` pairs. Closing it
//!   instead would leave the model only `{}`.
//! - An untyped value (`{}`, `true`, a property with no `type`) is written as a string, number,
//!   boolean or null; an array or an object is written as JSON text in the string. This needs no
//!   recursive schema, which Anthropic's strict mode refuses.
//!
//! The model's arguments are turned back by [`Encoding::decode`] when its calls are parsed, so
//! validation and the tool see the canonical form.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::branch::Tag;
use super::profile::{note, pointer_push, types_of, ProfileError};

/// How one tool's strict schema encodes its arguments, to turn the model's arguments back.
///
/// Made by [`openai_strict_encoded`](crate::profile::openai_strict_encoded) and
/// [`anthropic_strict_encoded`](crate::profile::anthropic_strict_encoded); an encoding that changes
/// nothing is the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Encoding {
    root: Place,
    /// Places under definitions, by JSON pointer (`/$defs/Node`), for `$ref`s.
    defs: BTreeMap<String, Place>,
}

/// What is encoded at one place of the schema, and below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Place {
    /// Nothing here or below.
    #[default]
    Same,
    /// An object; these properties have something encoded.
    Object(Vec<(String, Place)>),
    /// An array whose items have something encoded.
    Items(Box<Place>),
    /// Alternatives: the one the value's tag names, or else the first whose shape the value has.
    AnyOf(Vec<Branch>),
    /// A reference to a definition, by JSON pointer.
    Ref(String),
    /// Several of the above for one value, applied in turn.
    All(Vec<Place>),
    /// A map written as `[{"key", "value"}]`.
    Pairs(Box<Place>),
    /// Any value; arrays and objects written as JSON text.
    Json,
}

/// One alternative of an `anyOf`: what it encodes, and what tells it from the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Branch {
    pub(crate) tag: Option<Tag>,
    pub(crate) place: Place,
}

/// How deep `$ref`s may be followed without going into the value: a guard against a
/// definition that refers to itself.
const MAX_DEPTH: usize = 512;

impl Encoding {
    pub(crate) fn new(mut root: Place, mut defs: BTreeMap<String, Place>) -> Self {
        // A definition that encodes nothing is dropped, and so are references to it, until
        // nothing changes (a definition may refer to another).
        loop {
            let before = defs.len();
            defs.retain(|_, p| *p != Place::Same);
            let snapshot = defs.clone();
            for place in defs.values_mut() {
                *place = prune(std::mem::take(place), &snapshot);
            }
            defs.retain(|_, p| *p != Place::Same);
            if defs.len() == before {
                break;
            }
        }
        root = prune(root, &defs);
        Encoding { root, defs }
    }

    /// Whether the strict schema takes the arguments as they are.
    pub fn is_identity(&self) -> bool {
        self.root == Place::Same && self.defs.is_empty()
    }

    /// The model's arguments, turned back into what the canonical schema describes. A value
    /// that is not in the encoded shape (already canonical, or wrong) is left as it is, for
    /// validation to judge.
    pub fn decode(&self, arguments: Value) -> Value {
        self.apply(&self.root, arguments, Direction::Decode, 0)
    }

    /// Canonical arguments, written as the strict schema takes them: the inverse of
    /// [`Encoding::decode`].
    pub fn encode(&self, arguments: Value) -> Value {
        self.apply(&self.root, arguments, Direction::Encode, 0)
    }

    fn apply(&self, place: &Place, value: Value, to: Direction, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return value;
        }
        match (place, value) {
            (Place::Same, value) => value,
            (Place::Object(properties), Value::Object(mut map)) => {
                for (name, sub) in properties {
                    if let Some(v) = map.get_mut(name) {
                        *v = self.apply(sub, v.take(), to, depth + 1);
                    }
                }
                Value::Object(map)
            }
            (Place::Items(sub), Value::Array(items)) => Value::Array(
                items
                    .into_iter()
                    .map(|v| self.apply(sub, v, to, depth + 1))
                    .collect(),
            ),
            (Place::AnyOf(branches), value) => match self.branch(branches, &value, to, depth) {
                Some(place) => self.apply(place, value, to, depth + 1),
                None => value,
            },
            (Place::All(places), mut value) => {
                for p in places {
                    value = self.apply(p, value, to, depth + 1);
                }
                value
            }
            (Place::Ref(pointer), value) => match self.resolve(pointer) {
                Some(target) => self.apply(target, value, to, depth + 1),
                None => value,
            },
            (Place::Pairs(sub), value) => match to {
                Direction::Decode => match pairs(&value) {
                    Some(entries) => Value::Object(
                        entries
                            .into_iter()
                            .map(|(k, v)| (k, self.apply(sub, v, to, depth + 1)))
                            .collect(),
                    ),
                    None => value,
                },
                Direction::Encode => match value {
                    Value::Object(map) => Value::Array(
                        map.into_iter()
                            .map(|(k, v)| {
                                json!({ "key": k, "value": self.apply(sub, v, to, depth + 1) })
                            })
                            .collect(),
                    ),
                    other => other,
                },
            },
            (Place::Json, value) => match to {
                Direction::Decode => decode_json_text(value),
                Direction::Encode => encode_json_text(value),
            },
            (_, value) => value,
        }
    }

    /// Whether `value` has the shape of what `place` turns (for choosing an `anyOf` branch).
    fn fits(&self, place: &Place, value: &Value, to: Direction, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match place {
            Place::Same => false,
            Place::Object(_) => value.is_object(),
            Place::Items(_) => value.is_array(),
            Place::AnyOf(branches) => branches
                .iter()
                .any(|b| self.fits(&b.place, value, to, depth + 1)),
            Place::All(places) => places.iter().any(|p| self.fits(p, value, to, depth + 1)),
            Place::Ref(pointer) => self
                .resolve(pointer)
                .is_some_and(|p| self.fits(p, value, to, depth + 1)),
            Place::Pairs(_) => match to {
                Direction::Decode => pairs(value).is_some(),
                Direction::Encode => value.is_object(),
            },
            Place::Json => match to {
                Direction::Decode => value.is_string(),
                Direction::Encode => true,
            },
        }
    }

    /// The branch of an `anyOf` that `value` is: among those whose tag it matches (an object
    /// with a tagged enum's `kind`, or with the keys only one variant requires), the first whose
    /// shape it has, else the first; when it matches none, the first whose shape it has.
    /// Choosing by shape alone, an object would take the first object branch, whatever its tag.
    fn branch<'p>(
        &self,
        branches: &'p [Branch],
        value: &Value,
        to: Direction,
        depth: usize,
    ) -> Option<&'p Place> {
        let fits = |b: &Branch| self.fits(&b.place, value, to, depth);
        let tagged: Vec<&Branch> = branches
            .iter()
            .filter(|b| b.tag.as_ref().is_some_and(|t| t.matches(value)))
            .collect();
        match tagged.iter().find(|b| fits(b)).or(tagged.first()) {
            Some(branch) => Some(&branch.place),
            None => branches.iter().find(|b| fits(b)).map(|b| &b.place),
        }
    }

    fn resolve(&self, pointer: &str) -> Option<&Place> {
        let pointer = pointer.strip_prefix('#')?;
        if pointer.is_empty() {
            Some(&self.root)
        } else {
            self.defs.get(pointer)
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Direction {
    Decode,
    Encode,
}

/// The entries of `[{"key": "k", "value": v}, ...]`, when the value has that shape.
fn pairs(value: &Value) -> Option<Vec<(String, Value)>> {
    value
        .as_array()?
        .iter()
        .map(|item| {
            let map = item.as_object().filter(|m| m.len() == 2)?;
            Some((
                map.get("key")?.as_str()?.to_owned(),
                map.get("value")?.clone(),
            ))
        })
        .collect()
}

/// A string that is JSON text of an array, an object or a string becomes that value; anything
/// else stays as it is.
fn decode_json_text(value: Value) -> Value {
    let Value::String(text) = &value else {
        return value;
    };
    let looks_like_json = text.trim_start().starts_with(['[', '{', '"']);
    if !looks_like_json {
        return value;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(parsed @ (Value::Array(_) | Value::Object(_) | Value::String(_))) => parsed,
        _ => value,
    }
}

/// Arrays and objects become JSON text; so does a string that would otherwise be read as JSON
/// text, so that decoding gives it back.
fn encode_json_text(value: Value) -> Value {
    match value {
        Value::Array(_) | Value::Object(_) => Value::String(value.to_string()),
        Value::String(text) => {
            let decoded = decode_json_text(Value::String(text.clone()));
            if decoded == Value::String(text.clone()) {
                Value::String(text)
            } else {
                Value::String(Value::String(text).to_string())
            }
        }
        other => other,
    }
}

/// Whether a schema (after the profile's keyword cleaning) says nothing about the value's type:
/// it is then written as "any".
pub(crate) fn is_untyped(map: &Map<String, Value>) -> bool {
    [
        "type",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "enum",
        "const",
        "properties",
        "items",
    ]
    .iter()
    .all(|k| !map.contains_key(*k))
}

/// Rewrites an untyped schema as the strict "any": a string, number, boolean or null, with
/// arrays and objects as JSON text.
pub(crate) fn write_any(map: &mut Map<String, Value>) -> Place {
    let description = map.remove("description");
    map.clear();
    map.insert(
        "type".into(),
        json!(["string", "number", "boolean", "null"]),
    );
    if let Some(d) = description {
        map.insert("description".into(), d);
    }
    note(
        map,
        "Any JSON value: write an array or an object as JSON text in a string.",
    );
    Place::Json
}

/// Whether an object schema is a map: no properties of its own, and other keys allowed. `None`
/// when it is not; `Some(nullable)` when it is.
pub(crate) fn map_place(map: &Map<String, Value>) -> Option<bool> {
    let types = types_of(map);
    let is_object = types.iter().any(|t| t == "object");
    let only_object = types.iter().all(|t| t == "object" || t == "null");
    let no_properties = match map.get("properties") {
        None => true,
        Some(Value::Object(p)) => p.is_empty(),
        Some(_) => false,
    };
    let open = map.get("additionalProperties") != Some(&Value::Bool(false));
    (is_object && only_object && no_properties && open).then(|| types.iter().any(|t| t == "null"))
}

/// The first keyword beside a map schema that would apply to the object, not to its pairs
/// (`anyOf: [...]` next to `type: object`): such a map cannot be written as pairs, since the
/// keyword would then judge the array.
pub(crate) fn keyword_beside_map(map: &Map<String, Value>) -> Option<&'static str> {
    const BESIDE: &[&str] = &[
        "anyOf",
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "$ref",
        "dependentSchemas",
        "dependentRequired",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
    ];
    BESIDE.iter().copied().find(|k| map.contains_key(*k))
}

/// Rewrites a map schema as an array of `{"key", "value"}` pairs. `value` puts the values'
/// schema into the profile (its pointer is given) and says what it encodes.
pub(crate) fn write_pairs(
    map: &mut Map<String, Value>,
    nullable: bool,
    at: &str,
    value: &mut dyn FnMut(&mut Value, &str) -> Result<Place, ProfileError>,
) -> Result<Place, ProfileError> {
    let mut values = match map.remove("additionalProperties") {
        Some(schema @ Value::Object(_)) => schema,
        _ => json!({}),
    };
    let value_place = value(&mut values, &format!("{at}/additionalProperties"))?;
    for keyword in ["properties", "required"] {
        map.remove(keyword);
    }
    map.insert(
        "type".into(),
        if nullable {
            json!(["array", "null"])
        } else {
            json!("array")
        },
    );
    map.insert(
        "items".into(),
        json!({
            "type": "object",
            "properties": { "key": { "type": "string" }, "value": values },
            "required": ["key", "value"],
            "additionalProperties": false
        }),
    );
    note(
        map,
        "An object, written as a list of {\"key\", \"value\"} pairs.",
    );
    Ok(Place::Pairs(Box::new(value_place)))
}

/// A strict profile's transform of one schema at its pointer: rewrites it in place and says
/// how it encodes the arguments under it, recording each definition's place in `defs`.
pub(crate) type Transform =
    fn(&mut Value, &str, &mut BTreeMap<String, Place>) -> Result<Place, ProfileError>;

/// Runs a strict profile's `transform` on the subschemas of `map` it keeps (`properties`,
/// `items`, the `combinators` given, `$defs`), and returns how `map` encodes the arguments
/// under it, a `$ref` beside them included. Each profile decides what `map` itself keeps; this
/// is the walk they share.
pub(crate) fn transform_subschemas(
    map: &mut Map<String, Value>,
    at: &str,
    defs: &mut BTreeMap<String, Place>,
    combinators: &[&str],
    transform: Transform,
) -> Result<Place, ProfileError> {
    let mut places = Vec::new();
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        let mut encoded = Vec::new();
        for (name, sub) in properties.iter_mut() {
            let here = pointer_push(&pointer_push(at, "properties"), name);
            encoded.push((name.clone(), transform(sub, &here, defs)?));
        }
        places.push(object(encoded));
    }
    if let Some(items) = map.get_mut("items") {
        let place = transform(items, &pointer_push(at, "items"), defs)?;
        if place != Place::Same {
            places.push(Place::Items(Box::new(place)));
        }
    }
    for &keyword in combinators {
        if let Some(Value::Array(branches)) = map.get_mut(keyword) {
            let mut encoded = Vec::new();
            for (i, sub) in branches.iter_mut().enumerate() {
                // The tag as the canonical schema says it, before the profile rewrites
                // `required`.
                let tag = Tag::of(sub);
                let place = transform(sub, &format!("{at}/{keyword}/{i}"), defs)?;
                encoded.push(Branch { tag, place });
            }
            places.push(match keyword {
                "anyOf" => any_of(encoded),
                _ => all(encoded.into_iter().map(|b| b.place).collect()),
            });
        }
    }
    transform_definitions(map, at, defs, transform)?;
    if let Some(Value::String(pointer)) = map.get("$ref") {
        places.push(Place::Ref(pointer.clone()));
    }
    Ok(all(places))
}

/// [`write_any`], keeping `map`'s `$defs` (rewritten by `transform`), so that a `$ref` into
/// them still finds them.
pub(crate) fn write_any_keeping_definitions(
    map: &mut Map<String, Value>,
    at: &str,
    defs: &mut BTreeMap<String, Place>,
    transform: Transform,
) -> Result<Place, ProfileError> {
    transform_definitions(map, at, defs, transform)?;
    let definitions = map.remove("$defs");
    let place = write_any(map);
    if let Some(definitions) = definitions {
        map.insert("$defs".into(), definitions);
    }
    Ok(place)
}

/// Runs a strict profile's `transform` on each definition in `map`'s `$defs`, recording its
/// place in `defs`: for every schema that holds definitions, a map written as pairs included.
pub(crate) fn transform_definitions(
    map: &mut Map<String, Value>,
    at: &str,
    defs: &mut BTreeMap<String, Place>,
    transform: Transform,
) -> Result<(), ProfileError> {
    if let Some(Value::Object(definitions)) = map.get_mut("$defs") {
        for (name, sub) in definitions.iter_mut() {
            let here = pointer_push(&pointer_push(at, "$defs"), name);
            let place = transform(sub, &here, defs)?;
            defs.insert(here, place);
        }
    }
    Ok(())
}

/// The place of an object with these properties' places.
pub(crate) fn object(properties: Vec<(String, Place)>) -> Place {
    let kept: Vec<(String, Place)> = properties
        .into_iter()
        .filter(|(_, p)| *p != Place::Same)
        .collect();
    if kept.is_empty() {
        Place::Same
    } else {
        Place::Object(kept)
    }
}

/// The place of alternatives.
pub(crate) fn any_of(branches: Vec<Branch>) -> Place {
    if branches.iter().all(|b| b.place == Place::Same) {
        Place::Same
    } else {
        Place::AnyOf(branches)
    }
}

/// The place of a schema with several keywords that may each encode something (an object's
/// properties and a `$ref` beside them, say): each is applied in turn.
pub(crate) fn all(places: Vec<Place>) -> Place {
    let mut kept: Vec<Place> = places.into_iter().filter(|p| *p != Place::Same).collect();
    match kept.len() {
        0 => Place::Same,
        1 => kept.remove(0),
        _ => Place::All(kept),
    }
}

/// `place` with references to definitions that encode nothing dropped; `Same` when nothing is
/// left.
fn prune(place: Place, defs: &BTreeMap<String, Place>) -> Place {
    match place {
        Place::Ref(pointer)
            if pointer == "#" || defs.contains_key(pointer.trim_start_matches('#')) =>
        {
            Place::Ref(pointer)
        }
        Place::Ref(_) | Place::Same => Place::Same,
        Place::Object(properties) => object(
            properties
                .into_iter()
                .map(|(name, p)| (name, prune(p, defs)))
                .collect(),
        ),
        Place::Items(sub) => match prune(*sub, defs) {
            Place::Same => Place::Same,
            sub => Place::Items(Box::new(sub)),
        },
        Place::AnyOf(branches) => any_of(
            branches
                .into_iter()
                .map(|b| Branch {
                    tag: b.tag,
                    place: prune(b.place, defs),
                })
                .collect(),
        ),
        Place::All(places) => all(places.into_iter().map(|p| prune(p, defs)).collect()),
        Place::Pairs(sub) => Place::Pairs(Box::new(prune(*sub, defs))),
        Place::Json => Place::Json,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_round_trips_strings_that_look_like_json() {
        for value in [
            json!("plain"),
            json!("[1]"),
            json!("\"quoted\""),
            json!("123"),
            json!([1, { "a": null }]),
            json!({ "k": [true] }),
            json!(3.5),
            Value::Null,
        ] {
            assert_eq!(
                decode_json_text(encode_json_text(value.clone())),
                value,
                "{value}"
            );
        }
        assert_eq!(decode_json_text(json!("{\"a\": 1}")), json!({ "a": 1 }));
        assert_eq!(decode_json_text(json!("{oops")), json!("{oops"));
    }

    #[test]
    fn a_variant_that_encodes_nothing_is_chosen_by_its_tag_not_passed_over() {
        // Text's payload is a string, Raw's any value written as JSON text: a Text payload
        // that looks like JSON stays a string.
        let schema = json!({ "type": "object", "properties": { "op": { "oneOf": [
            { "type": "object", "properties": {
                "kind": { "type": "string", "const": "Text" }, "payload": { "type": "string" }
            }, "required": ["kind", "payload"] },
            { "type": "object", "properties": {
                "kind": { "type": "string", "enum": ["Raw"] }, "payload": {}
            }, "required": ["kind", "payload"] }
        ] } }, "required": ["op"] });
        for (_, encoding) in [
            crate::provider::openai_strict::openai_strict_encoded(&schema).unwrap(),
            crate::provider::anthropic::anthropic_strict_encoded(&schema).unwrap(),
        ] {
            let text = json!({ "op": { "kind": "Text", "payload": "[1]" } });
            assert_eq!(encoding.decode(text.clone()), text);
            assert_eq!(encoding.encode(text.clone()), text);
            let raw = json!({ "op": { "kind": "Raw", "payload": "[1]" } });
            assert_eq!(
                encoding.decode(raw),
                json!({ "op": { "kind": "Raw", "payload": [1] } })
            );
        }
    }

    #[test]
    fn pairs_decode_into_an_object_and_other_values_are_left_alone() {
        let encoding = Encoding::new(
            Place::Object(vec![("m".into(), Place::Pairs(Box::new(Place::Json)))]),
            BTreeMap::new(),
        );
        let decoded = encoding.decode(json!({ "m": [
            { "key": "a", "value": "[1, 2]" },
            { "key": "b", "value": 3 }
        ]}));
        assert_eq!(decoded, json!({ "m": { "a": [1, 2], "b": 3 } }));
        assert_eq!(
            encoding.encode(decoded.clone()),
            json!({ "m": [
                { "key": "a", "value": "[1,2]" },
                { "key": "b", "value": 3 }
            ]})
        );
        assert_eq!(
            encoding.decode(json!({ "m": "not pairs" })),
            json!({ "m": "not pairs" })
        );
    }
}
