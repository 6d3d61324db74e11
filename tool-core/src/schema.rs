//! The canonical JSON Schema of a tool's arguments.
//!
//! One schema per tool, made once: root `type: object` with `properties`, `required` and
//! `additionalProperties: false`; every non-recursive `$ref` inlined so no `$defs` remain unless a
//! type is recursive; `$schema` and `title` noise removed; integer formats such as `uint32`
//! turned into `minimum`/`maximum`. The model is shown this schema and validation enforces it.
//!
//! Every object with `properties` that says nothing of other keys is closed
//! (`additionalProperties: false`), nested structs as well as the root, so that a key the model
//! made up is refused rather than dropped. An object stays open when it says so: a struct with
//! `#[serde(flatten)]` of a map (its schema has `additionalProperties`), one marked
//! `#[schemars(extend("additionalProperties" = true))]`, and the branches of an `allOf`, or of
//! an `anyOf`/`oneOf` beside `properties`, which describe one object together.
//!
//! One rule is ours, and it is pydantic's: a property that admits `null` and has no `default` is
//! required. An `Option<T>` field of your struct is therefore "required, null allowed" (the model
//! writes `null` rather than leaving it out); give it `#[serde(default)]` to make it optional
//! (schemars writes the default only for a `Serialize` type: for another, add
//! `#[schemars(extend("default" = null))]`). Tool parameters of type `Option<T>` get that
//! default whatever `T`, so they may be left out.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde_json::{Map, Value};

mod limits;

pub(crate) use limits::percent_decoded;
pub use limits::SchemaLimits;

/// How many steps a `pattern` with backreferences or lookaround may take against one string
/// before the match gives up (and the value is refused, naming the pattern). A pattern without
/// them runs on the `regex` crate's automata, which never backtrack: `^(a+)+$` takes time linear
/// in the string.
pub const PATTERN_BACKTRACK_LIMIT: usize = 100_000;

/// The keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// The keywords whose value is an array of subschemas.
const ARRAYS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// The keywords whose value maps names to subschemas.
const MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// Why a schema cannot be a tool's arguments schema, or cannot be used at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The arguments schema is not a JSON object (it is `true`, `false` or not a schema).
    #[error("the arguments schema must be an object schema")]
    NotAnObjectSchema,
    /// The arguments schema's `type` is not `object`; arguments are always a JSON object.
    #[error("the arguments must be an object, but the schema's type is {found}")]
    NotObjectType {
        /// The `type` found.
        found: Value,
    },
    /// The arguments schema says neither `type: object` nor `properties`.
    #[error("the arguments schema has no `type: object`; use a struct")]
    NoObjectType,
    /// The schema breaks its meta-schema.
    #[error("{}", at_pointer(.at, .message))]
    Invalid {
        /// JSON pointer into the schema (`""` for the root).
        at: String,
        /// What the meta-schema says.
        message: String,
    },
    /// The schema obeys its meta-schema but cannot be compiled into a validator (a `$ref` that
    /// does not resolve, a pattern that is not a regular expression...).
    #[error("{message}")]
    Uncompilable {
        /// What the validator's compiler says.
        message: String,
    },
    /// The schema nests deeper than [`SchemaLimits::depth`].
    #[error("the schema nests {limit} or more levels deep; SchemaLimits::depth allows fewer than {limit}")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// With its refs followed, the schema has more subschemas than
    /// [`SchemaLimits::expanded_subschemas`].
    #[error("with its `$ref`s followed, the schema has more than {limit} subschemas (SchemaLimits::expanded_subschemas)")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Refs lead back to a schema they started from without going into the value, so that
    /// validating would never end.
    #[error("`$ref` to `{at}` leads back to where it started without going into the value; validating would never end")]
    RefLoop {
        /// The ref that closes the loop.
        at: String,
    },
    /// A ref points outside the schema (another file, a URL): nothing is fetched.
    #[error("`$ref` to `{reference}` points outside the schema; only refs within it (`#...`) are followed, and nothing is fetched")]
    RefOutside {
        /// The ref as written.
        reference: String,
    },
    /// A ref within the schema leads nowhere: not a JSON pointer to a place in the schema nor
    /// an anchor defined in it.
    #[error("`$ref` to `{reference}` does not resolve within the schema; refs are JSON pointers from the root (`#/$defs/A`) or anchors defined in it (`#A`)")]
    RefUnresolved {
        /// The ref as written.
        reference: String,
    },
    /// A subschema has its own `$id` beside refs: the validator would resolve refs under it
    /// against that `$id`, which the checks on refs do not follow.
    #[error("a subschema has its own `$id` ({id}) in a schema with refs; refs are resolved against the root here, so remove the nested `$id`")]
    NestedId {
        /// The nested `$id`, as JSON.
        id: String,
    },
}

/// Calls `visit` on every immediate subschema of `schema` (not on `schema` itself).
///
/// Knows which keywords hold schemas, so a property named `title` or `format` is never mistaken
/// for a keyword. `items` as an array (draft 4 to 7 tuples) is walked too.
pub fn for_each_subschema_mut(schema: &mut Value, visit: &mut dyn FnMut(&mut Value)) {
    let Value::Object(map) = schema else { return };
    for (keyword, value) in map.iter_mut() {
        for_each_subschema_of(keyword, value, visit);
    }
}

/// Calls `visit` on `schema` and then on every schema nested in it, depth first.
pub fn walk_mut(schema: &mut Value, visit: &mut dyn FnMut(&mut Value)) {
    visit(schema);
    for_each_subschema_mut(schema, &mut |sub| walk_mut(sub, visit));
}

/// The schema schemars generates for `T`, as draft 2020-12, for deserialization.
pub fn generate<T: JsonSchema + ?Sized>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The schema schemars generates for `T`, as draft 2020-12, for serialization: what a value
/// of `T` looks like once written (a tool's result).
pub fn generate_for_output<T: JsonSchema + ?Sized>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The canonical output schema of `T`, the schema of a tool's structured result: refs inlined,
/// `$schema` and `title` removed, integer formats as bounds, as for arguments. Unlike
/// arguments, objects are left open and no property is made required beyond what serde
/// always writes: it describes what the tool returns, not what a model may send. `None` when
/// the schema admits anything (`serde_json::Value`'s `true`).
pub fn canonical_output_for<T: JsonSchema + ?Sized>() -> Option<Value> {
    let schema = canonicalize_as(generate_for_output::<T>(), Purpose::Output);
    let admits_anything = match &schema {
        Value::Bool(true) => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    };
    (!admits_anything).then_some(schema)
}

/// The canonical arguments schema for a type whose schema is an object: see the module docs.
///
/// Fails when the root is not an object schema (arguments are always an object).
pub fn canonical_for<T: JsonSchema + ?Sized>() -> Result<Value, SchemaError> {
    canonical_arguments(generate::<T>())
}

/// Canonicalizes a generated arguments schema: inlines refs, removes noise, turns integer
/// formats into bounds, and closes the root object and every struct's object in it.
pub fn canonical_arguments(schema: Value) -> Result<Value, SchemaError> {
    let mut schema = canonicalize(schema);
    close_objects(&mut schema, true);
    let Value::Object(root) = &mut schema else {
        return Err(SchemaError::NotAnObjectSchema);
    };
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(SchemaError::NotObjectType {
                found: other.clone(),
            })
        }
        None if root.contains_key("properties") => {
            root.insert("type".into(), "object".into());
        }
        None => return Err(SchemaError::NoObjectType),
    }
    root.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    root.entry("additionalProperties")
        .or_insert(Value::Bool(false));
    Ok(schema)
}

/// Keywords that say what an object's other keys may be, or that share the object with other
/// schemas: an object schema with any of them is left as it is.
const OPENERS: &[&str] = &[
    "additionalProperties",
    "patternProperties",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "if",
    "dependentSchemas",
];

/// Adds `additionalProperties: false` to every object schema with `properties` and none of
/// the [`OPENERS`], where `close_here` allows. The branches of an `allOf`, and those of an
/// `anyOf`/`oneOf` beside `properties` (a flattened enum), describe one object with their
/// siblings: closing one would refuse the others' keys, so they stay open, though what is
/// nested in them does not.
fn close_objects(schema: &mut Value, close_here: bool) {
    let Value::Object(map) = schema else { return };
    let has_properties = map.contains_key("properties");
    for (keyword, value) in map.iter_mut() {
        let close_branches = match keyword.as_str() {
            "allOf" => false,
            "anyOf" | "oneOf" => !has_properties,
            _ => true,
        };
        for_each_subschema_of(keyword, value, &mut |sub| {
            close_objects(sub, close_branches)
        });
    }
    if close_here && has_properties && !OPENERS.iter().any(|k| map.contains_key(*k)) {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// Calls `visit` on each subschema held by one keyword's value.
fn for_each_subschema_of(keyword: &str, value: &mut Value, visit: &mut dyn FnMut(&mut Value)) {
    if SINGLE.contains(&keyword) {
        match value {
            Value::Array(items) if keyword == "items" => items.iter_mut().for_each(&mut *visit),
            _ => visit(value),
        }
    } else if ARRAYS.contains(&keyword) {
        if let Value::Array(items) = value {
            items.iter_mut().for_each(&mut *visit);
        }
    } else if MAPS.contains(&keyword) {
        if let Value::Object(entries) = value {
            entries.values_mut().for_each(&mut *visit);
        }
    }
}

/// Inlines non-recursive refs, removes `$schema` and `title`, and turns integer formats into
/// bounds. Works on any schema; the root is not required to be an object. A schema over the
/// default [`SchemaLimits`] is returned as it is, for [`check_is_schema`] to refuse.
pub fn canonicalize(schema: Value) -> Value {
    canonicalize_as(schema, Purpose::Arguments)
}

/// What a schema describes: arguments a model sends, or a result a tool returns.
#[derive(Clone, Copy, PartialEq)]
enum Purpose {
    /// Arguments: a nullable property without a default is required (pydantic's rule).
    Arguments,
    /// A result: `required` is what the type's serialization says.
    Output,
}

fn canonicalize_as(mut schema: Value, purpose: Purpose) -> Value {
    if limits::check(&schema, &SchemaLimits::default()).is_err() {
        return schema;
    }
    let defs = take_defs(&mut schema);
    let mut kept = BTreeSet::new();
    inline_refs(&mut schema, &defs, &mut Vec::new(), &mut kept);
    if !kept.is_empty() {
        let mut done = BTreeSet::new();
        let mut recursive = Map::new();
        while let Some(name) = kept.iter().find(|n| !done.contains(*n)).cloned() {
            done.insert(name.clone());
            let mut def = defs.get(&name).cloned().unwrap_or(Value::Bool(true));
            inline_refs(&mut def, &defs, &mut vec![name.clone()], &mut kept);
            recursive.insert(name, def);
        }
        if let Value::Object(root) = &mut schema {
            root.insert("$defs".into(), Value::Object(recursive));
        }
    }
    if let Value::Object(root) = &mut schema {
        root.shift_remove("$schema");
    }
    walk_mut(&mut schema, &mut |sub| {
        if let Value::Object(map) = sub {
            map.shift_remove("title");
            integer_format_to_bounds(map);
            flatten_nullable_any_of(map);
            if purpose == Purpose::Arguments {
                require_nullable_without_default(map);
            }
        }
    });
    schema
}

fn take_defs(schema: &mut Value) -> Map<String, Value> {
    let Value::Object(root) = schema else {
        return Map::new();
    };
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = root.shift_remove(key) {
            defs.extend(found);
        }
    }
    defs
}

/// The definition name a local ref points at, with JSON pointer escapes decoded.
fn local_def_name(reference: &str) -> Option<String> {
    let rest = reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))?;
    Some(rest.replace("~1", "/").replace("~0", "~"))
}

fn inline_refs(
    schema: &mut Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    kept: &mut BTreeSet<String>,
) {
    // Siblings first, so that what is merged in below is never walked twice.
    for_each_subschema_mut(schema, &mut |sub| inline_refs(sub, defs, stack, kept));
    let Value::Object(map) = schema else { return };
    let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(local_def_name)
    else {
        return;
    };
    let Some(def) = defs.get(&name) else { return };
    if stack.contains(&name) {
        kept.insert(name.clone());
        let pointer = name.replace('~', "~0").replace('/', "~1");
        map.insert("$ref".into(), Value::String(format!("#/$defs/{pointer}")));
        return;
    }
    let mut inlined = def.clone();
    stack.push(name);
    inline_refs(&mut inlined, defs, stack, kept);
    stack.pop();
    map.shift_remove("$ref");
    match inlined {
        Value::Object(def_map) => {
            for (key, value) in def_map {
                map.entry(key).or_insert(value);
            }
        }
        Value::Bool(false) => {
            map.insert("not".into(), Value::Object(Map::new()));
        }
        _ => {}
    }
}

/// `anyOf: [X, {"type": "null"}]`, as schemars writes `Option<X>`, becomes `X` made nullable,
/// so that validation errors name X's allowed values rather than "not valid under any of the
/// schemas listed in 'anyOf'". Only for a plain X whose keywords do not clash with the parent's.
fn flatten_nullable_any_of(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return;
    };
    if branches.len() != 2 {
        return;
    }
    let null = serde_json::json!({ "type": "null" });
    let Some(null_at) = branches.iter().position(|b| *b == null) else {
        return;
    };
    let Value::Object(other) = &branches[1 - null_at] else {
        return;
    };
    let composite = ["$ref", "anyOf", "oneOf", "allOf", "not", "if"]
        .iter()
        .any(|k| other.contains_key(*k));
    if composite
        || other.keys().any(|k| map.contains_key(k))
        || !(other.contains_key("type") || other.contains_key("enum"))
    {
        return;
    }
    let mut other = other.clone();
    match other.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            other.insert("type".into(), serde_json::json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.contains(&Value::from("null")) => {
            types.push("null".into())
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = other.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
    map.shift_remove("anyOf");
    map.extend(other);
}

/// Adds to `required` every property that admits `null` and has no `default`.
fn require_nullable_without_default(map: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = map.get("properties") else {
        return;
    };
    let wanted: Vec<String> = properties
        .iter()
        .filter(|(_, schema)| admits_null(schema) && schema.get("default").is_none())
        .map(|(name, _)| name.clone())
        .collect();
    if wanted.is_empty() {
        return;
    }
    let required = map
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(required) = required {
        for name in wanted {
            if !required.iter().any(|r| r.as_str() == Some(&name)) {
                required.push(Value::String(name));
            }
        }
    }
}

/// Removes `null` values of properties that are optional and whose schema does not admit
/// `null`: what a strict-mode model writes for a property it leaves out, read as absent.
/// Follows nested objects and arrays through `properties`, `items`, `additionalProperties`,
/// local `$ref`s and the branches of `allOf`, `anyOf` and `oneOf` (an enum's variants). A
/// `null` is dropped when some schema that applies there names the property, none requires it
/// and none admits `null` for it. Returns whether anything was removed.
pub fn drop_optional_nulls(schema: &Value, instance: &mut Value) -> bool {
    drop_nulls(schema, &[schema], instance, 0)
}

/// How deep [`drop_optional_nulls`] follows an instance; deeper values are left as they are
/// (the validator's nesting limit refuses them anyway).
const NULLS_DEPTH: usize = 128;

/// How many schemas may apply at one place before the rest are ignored: a bound on what a
/// hostile schema of many combinators can cost.
const APPLICABLE_LIMIT: usize = 256;

fn drop_nulls(root: &Value, schemas: &[&Value], instance: &mut Value, depth: usize) -> bool {
    if depth > NULLS_DEPTH {
        return false;
    }
    let here = applicable(root, schemas);
    let mut changed = false;
    match instance {
        Value::Object(map) => {
            let named = |key: &str| -> Vec<&Value> {
                let named = here.iter().filter_map(|s| s.get("properties")?.get(key));
                named.collect()
            };
            let required = |key: &str| {
                here.iter().any(|s| {
                    s.get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|r| r.iter().any(|name| name == key))
                })
            };
            map.retain(|key, value| {
                if !value.is_null() {
                    return true;
                }
                let schemas = named(key);
                let drop = !schemas.is_empty()
                    && !required(key)
                    && !applicable(root, &schemas).into_iter().any(takes_null);
                changed |= drop;
                !drop
            });
            for (key, value) in map.iter_mut() {
                let mut schemas = named(key);
                if schemas.is_empty() {
                    let open = here.iter().filter_map(|s| s.get("additionalProperties"));
                    schemas = open.filter(|a| a.is_object()).collect();
                }
                if !schemas.is_empty() {
                    changed |= drop_nulls(root, &schemas, value, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            let schemas: Vec<&Value> = (here.iter())
                .filter_map(|s| s.get("items").filter(|i| i.is_object()))
                .collect();
            if !schemas.is_empty() {
                for item in items {
                    changed |= drop_nulls(root, &schemas, item, depth + 1);
                }
            }
        }
        _ => {}
    }
    changed
}

/// `schemas` and every schema that applies through them: local `$ref`s resolved in `root`, and
/// the branches of `allOf`, `anyOf` and `oneOf`; each once.
fn applicable<'a>(root: &'a Value, schemas: &[&'a Value]) -> Vec<&'a Value> {
    let mut found: Vec<&Value> = Vec::new();
    let mut todo: Vec<&Value> = schemas.to_vec();
    while let Some(schema) = todo.pop() {
        if found.len() >= APPLICABLE_LIMIT || found.iter().any(|f| std::ptr::eq(*f, schema)) {
            continue;
        }
        found.push(schema);
        let reference = schema.get("$ref").and_then(Value::as_str);
        if let Some(target) = reference.and_then(|r| root.pointer(r.strip_prefix('#')?)) {
            todo.push(target);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(keyword) {
                todo.extend(branches);
            }
        }
    }
    found
}

/// Whether a schema takes `null` as a value of its own: its type admits it, or its `enum` or
/// `const` names it (`{"enum": ["x", null]}`: a `null` there says something).
fn takes_null(schema: &Value) -> bool {
    let listed = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|values| values.contains(&Value::Null));
    admits_null(schema) || listed || schema.get("const") == Some(&Value::Null)
}

/// Whether a schema's own type admits `null` (through `type` or an `anyOf`/`oneOf` branch).
pub fn admits_null(schema: &Value) -> bool {
    let is_null_type = |t: &Value| match t {
        Value::String(s) => s == "null",
        Value::Array(types) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    if schema.get("type").is_some_and(is_null_type) {
        return true;
    }
    ["anyOf", "oneOf"].iter().any(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(admits_null))
    })
}

fn integer_format_to_bounds(map: &mut Map<String, Value>) {
    let Some(format) = map.get("format").and_then(Value::as_str) else {
        return;
    };
    let bounds: (i128, i128) = match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        "float" | "double" => {
            map.shift_remove("format");
            return;
        }
        _ => return,
    };
    map.shift_remove("format");
    tighten(map, "minimum", bounds.0, |new, old| new > old);
    tighten(map, "maximum", bounds.1, |new, old| new < old);
}

/// Sets `keyword` to `bound` unless the schema already has a tighter one.
fn tighten(
    map: &mut Map<String, Value>,
    keyword: &str,
    bound: i128,
    tighter: fn(f64, f64) -> bool,
) {
    let existing = map.get(keyword).and_then(Value::as_f64);
    if existing.is_some_and(|old| !tighter(bound as f64, old)) {
        return;
    }
    let number = i64::try_from(bound)
        .map(Value::from)
        .or_else(|_| u64::try_from(bound).map(Value::from))
        .unwrap_or(Value::Null);
    map.insert(keyword.into(), number);
}

/// Checks `schema` against `limits` alone (depth, size with refs followed, refs within the
/// schema), without recursion: what must hold before anything walks a schema recursively.
pub fn check_limits(schema: &Value, limits: &SchemaLimits) -> Result<(), SchemaError> {
    limits::check(schema, limits)
}

/// Checks that `schema` is a valid JSON Schema (against its meta-schema) that can be compiled
/// into a validator, within the default [`SchemaLimits`].
pub fn check_is_schema(schema: &Value) -> Result<(), SchemaError> {
    check_is_schema_within(schema, &SchemaLimits::default())
}

/// Checks that `schema` is within `limits`, has no ref outside itself, obeys its meta-schema and
/// can be compiled into a validator (with [`validator_options`]). The limits come first, so
/// nothing walks a schema deeper or larger than they allow.
pub fn check_is_schema_within(schema: &Value, limits: &SchemaLimits) -> Result<(), SchemaError> {
    limits::check(schema, limits)?;
    jsonschema::meta::validate(schema).map_err(|e| SchemaError::Invalid {
        at: e.instance_path().as_str().to_owned(),
        message: e.to_string(),
    })?;
    validator_options()
        .build(schema)
        .map(drop)
        .map_err(|e| SchemaError::Uncompilable {
            message: e.to_string(),
        })
}

/// The `jsonschema` options every validator of a tool's schema is built with: no retrieval of
/// any kind (a ref outside the schema fails to compile, even if a dependency turns on
/// `jsonschema`'s HTTP or file features), and a `pattern` that needs backtracking gives up after
/// [`PATTERN_BACKTRACK_LIMIT`] steps.
pub fn validator_options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options().offline().with_pattern_options(
        jsonschema::PatternOptions::fancy_regex().backtrack_limit(PATTERN_BACKTRACK_LIMIT),
    )
}

/// What kind of JSON value `value` is, in words: `null`, `a boolean`, `a number`, `a string`,
/// `an array`, `an object`.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn at_pointer(pointer: &str, message: &str) -> String {
    if pointer.is_empty() {
        message.to_owned()
    } else {
        format!("at {pointer}: {message}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inlines_nested_refs_and_keeps_sibling_descriptions() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "a": { "$ref": "#/$defs/A", "description": "the a" },
                "title": { "type": "string", "title": "not noise: a property named title" }
            },
            "$defs": {
                "A": { "type": "object", "properties": { "b": { "$ref": "#/$defs/B" } } },
                "B": { "type": "string", "enum": ["x", "y"] }
            }
        });
        let got = canonical_arguments(schema).unwrap();
        assert_eq!(
            got,
            json!({
                "type": "object",
                "properties": {
                    "a": {
                        "description": "the a",
                        "type": "object",
                        "properties": { "b": { "type": "string", "enum": ["x", "y"] } },
                        "additionalProperties": false
                    },
                    "title": { "type": "string" }
                },
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn keeps_recursive_definitions_as_refs() {
        let schema = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/Node" } },
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } },
                        "leaf": { "$ref": "#/$defs/Leaf" }
                    }
                },
                "Leaf": { "type": "integer" }
            }
        });
        let got = canonicalize(schema);
        assert_eq!(
            got["properties"]["root"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(
            got["$defs"]["Node"]["properties"]["leaf"],
            json!({"type": "integer"})
        );
        assert!(got["$defs"].get("Leaf").is_none());
        check_is_schema(&got).unwrap();
    }

    #[test]
    fn integer_formats_become_bounds_and_keep_tighter_ones() {
        let mut got = canonicalize(json!({
            "type": "object",
            "properties": {
                "a": { "type": "integer", "format": "uint32", "minimum": 0 },
                "b": { "type": "integer", "format": "int8", "maximum": 10 },
                "c": { "type": ["integer", "null"], "format": "uint64" },
                "d": { "type": "number", "format": "double" }
            }
        }));
        let props = got["properties"].take();
        assert_eq!(
            props["a"],
            json!({ "type": "integer", "minimum": 0, "maximum": 4294967295u64 })
        );
        assert_eq!(
            props["b"],
            json!({ "type": "integer", "minimum": -128, "maximum": 10 })
        );
        assert_eq!(props["c"]["maximum"], json!(u64::MAX));
        assert_eq!(props["d"], json!({ "type": "number" }));
    }

    #[test]
    fn optional_nulls_are_dropped_through_maps_all_of_and_references() {
        let map = json!({ "type": "object", "additionalProperties": {
            "type": "object", "properties": { "a": { "type": "string" } }
        } });
        let mut instance = json!({ "k": { "a": null } });
        assert!(drop_optional_nulls(&map, &mut instance));
        assert_eq!(instance, json!({ "k": {} }));

        let all_of = json!({ "allOf": [
            { "properties": { "a": { "type": "string" } } },
            { "properties": { "b": { "type": "integer" } }, "required": ["b"] }
        ] });
        let mut instance = json!({ "a": null, "b": null });
        assert!(drop_optional_nulls(&all_of, &mut instance));
        assert_eq!(instance, json!({ "b": null }), "a required null stays");

        let nullable = json!({
            "properties": { "n": { "$ref": "#/$defs/N" } },
            "$defs": { "N": { "type": ["integer", "null"] } }
        });
        let mut instance = json!({ "n": null });
        assert!(!drop_optional_nulls(&nullable, &mut instance));

        // A null an `enum` or `const` lists is a value ("clear this field"), kept.
        let listed = json!({ "properties": {
            "e": { "enum": ["x", null] }, "c": { "const": null }, "s": { "type": "string" }
        } });
        let mut instance = json!({ "e": null, "c": null, "s": null });
        assert!(drop_optional_nulls(&listed, &mut instance));
        assert_eq!(instance, json!({ "e": null, "c": null }));

        // A reference to itself is followed once.
        let looped = json!({ "$ref": "#", "properties": { "a": { "type": "string" } } });
        let mut instance = json!({ "a": null });
        assert!(drop_optional_nulls(&looped, &mut instance));
        assert_eq!(instance, json!({}));
    }

    #[test]
    fn nullable_without_default_is_required_but_with_default_is_not() {
        let got = canonicalize(json!({
            "type": "object",
            "properties": {
                "a": { "type": ["string", "null"] },
                "b": { "type": ["string", "null"], "default": null },
                "c": { "anyOf": [{ "type": "integer" }, { "type": "null" }] },
                "d": { "type": "string" }
            },
            "required": ["d"]
        }));
        assert_eq!(got["required"], json!(["d", "a", "c"]));
    }

    #[test]
    fn option_of_an_enum_becomes_a_nullable_enum() {
        let got = canonicalize(json!({
            "type": "object",
            "properties": {
                "unit": { "anyOf": [{ "type": "string", "enum": ["c", "f"] }, { "type": "null" }], "description": "d" },
                "node": { "anyOf": [{ "$ref": "#/$defs/N" }, { "type": "null" }] }
            },
            "$defs": { "N": { "type": "object", "properties": { "next": { "anyOf": [{ "$ref": "#/$defs/N" }, { "type": "null" }] } } } }
        }));
        assert_eq!(
            got["properties"]["unit"],
            json!({ "description": "d", "type": ["string", "null"], "enum": ["c", "f", null] })
        );
        assert_eq!(
            got["$defs"]["N"]["properties"]["next"]["anyOf"][0],
            json!({ "$ref": "#/$defs/N" }),
            "recursive refs stay"
        );
    }

    #[test]
    fn arguments_root_must_be_an_object() {
        assert_eq!(
            canonical_arguments(json!({ "type": "string" })),
            Err(SchemaError::NotObjectType {
                found: json!("string")
            })
        );
        assert_eq!(
            canonical_arguments(json!({ "anyOf": [] })),
            Err(SchemaError::NoObjectType)
        );
        assert_eq!(
            canonical_arguments(json!(true)),
            Err(SchemaError::NotAnObjectSchema)
        );
        let got = canonical_arguments(json!({ "properties": {} })).unwrap();
        assert_eq!(
            got,
            json!({ "type": "object", "properties": {}, "additionalProperties": false })
        );
    }

    #[test]
    fn nested_struct_objects_are_closed_unless_they_say_otherwise() {
        let got = canonical_arguments(json!({
            "type": "object",
            "properties": {
                "strict": { "type": "object", "properties": { "a": {} } },
                "open": { "type": "object", "properties": { "a": {} }, "additionalProperties": true },
                "map": { "type": "object", "additionalProperties": { "type": "integer" } },
                "extras": { "type": "object", "properties": { "a": {} }, "additionalProperties": {} },
                "items": { "type": "array", "items": { "type": "object", "properties": { "b": {} } } },
                "variant": { "oneOf": [{ "type": "object", "properties": { "k": { "const": "x" } } }] },
                "flattened": {
                    "type": "object",
                    "properties": { "a": {} },
                    "oneOf": [{ "properties": { "b": { "type": "object", "properties": {} } } }]
                },
                "both": { "allOf": [{ "properties": { "a": {} } }, { "properties": { "b": {} } }] }
            }
        }))
        .unwrap();
        let closed = |pointer: &str| {
            got.pointer(pointer)
                .and_then(|s| s.get("additionalProperties"))
                .cloned()
        };
        assert_eq!(closed(""), Some(json!(false)));
        assert_eq!(closed("/properties/strict"), Some(json!(false)));
        assert_eq!(closed("/properties/open"), Some(json!(true)));
        assert_eq!(
            closed("/properties/map"),
            Some(json!({ "type": "integer" }))
        );
        assert_eq!(closed("/properties/extras"), Some(json!({})));
        assert_eq!(closed("/properties/items/items"), Some(json!(false)));
        assert_eq!(closed("/properties/variant/oneOf/0"), Some(json!(false)));
        assert_eq!(closed("/properties/flattened"), None);
        assert_eq!(closed("/properties/flattened/oneOf/0"), None);
        assert_eq!(
            closed("/properties/flattened/oneOf/0/properties/b"),
            Some(json!(false))
        );
        assert_eq!(closed("/properties/both/allOf/0"), None);
    }

    #[test]
    fn check_is_schema_rejects_bad_types() {
        assert!(check_is_schema(&json!({ "type": "object" })).is_ok());
        let err =
            check_is_schema(&json!({ "type": "object", "properties": { "a": { "type": 3 } } }))
                .unwrap_err();
        assert!(
            matches!(&err, SchemaError::Invalid { at, .. } if at == "/properties/a/type"),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with("at /properties/a/type: "),
            "{err}"
        );
    }
}
